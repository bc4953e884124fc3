"""What every layer shares (upstream: apimachinery's ``pkg/util``): :mod:`.field`, :mod:`.forking`,
:mod:`.collector`, :mod:`.heap`."""
