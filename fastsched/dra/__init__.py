"""Dynamic Resource Allocation: the CEL environment of device selectors (:mod:`.cel`), semantic
versions (:mod:`.semver`) and the structured allocator (:mod:`.allocator`, upstream
``k8s.io/dynamic-resource-allocation/structured``)."""
