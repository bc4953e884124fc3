"""What every layer shares (upstream: apimachinery's ``pkg/util``): :mod:`.field`."""
