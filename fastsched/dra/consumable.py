"""Consumable capacity (DRAConsumableCapacity, beta and on at v1.37.2; DRAFractionalCapacityRange).

A port of upstream's ``structured/internal/incubating/consumable_capacity.go`` (v0.37.2) and of
the ``ConsumedCapacity`` / ``ConsumedCapacityCollection`` helpers of ``structured/schedulerapi``:
how much of a device's capacities a request consumes (``calculateConsumedCapacity``: the request
rounded up by the capacity's ``requestPolicy``, the policy's default or the whole capacity when
the request names no amount), whether that violates the policy, and whether it still fits next to
what is already allocated and what is being allocated (``CmpRequestOverCapacity``).

Amounts are exact (:class:`fractions.Fraction` sums of :class:`~fastsched.api.quantity.Quantity`
values); upstream's ``Quantity`` arithmetic is exact too. Where upstream reads ``Value()`` or
``MilliValue()`` (the step arithmetic of a ``validRange``) this module does the same, with
upstream's guards against values that do not fit an int64.
"""
from __future__ import annotations


from fractions import Fraction
from typing import Any, Mapping

from ..api.quantity import INT64_MAX, Quantity, canonical, canonical_text as _canonical_text, format_of as _format_of, parse_quantity

__all__ = ["CapacityError", "CapacityRequestNotRepresentable", "NegativeCapacity", "cmp_request_over_capacity",
           "calculate_consumed_capacity", "consumed_capacity_from_request", "violates_policy", "use_milli",
           "safe_milli_value", "ConsumedCapacityCollection", "add_capacity", "sub_capacity", "capacity_empty"]

_NANOS_PER_MILLI = 10**6
_NANOS_PER_UNIT = 10**9

#: name -> amount
ConsumedCapacity = dict[str, Fraction]


class CapacityError(Exception):
    """A fatal capacity error: the allocation aborts (upstream returns it from ``Allocate``)."""


class CapacityRequestNotRepresentable(CapacityError):
    """``errCapacityRequestNotRepresentable``."""

    BASE = "capacity request cannot be represented in the device's range arithmetic"


class NegativeCapacity(CapacityError):
    """``errNegativeCapacity``."""


def safe_milli_value(q: Quantity) -> int | None:
    """``safeMilliValue``: the milli value when the conversion is lossless, else None."""
    milli = q.milli_value()
    if milli * _NANOS_PER_MILLI != q.nano_value():
        return None
    return milli


def use_milli(valid_range: Any, fractional_capacity_range: bool) -> bool:
    """``useMilli``: milli-value arithmetic when DRAFractionalCapacityRange is on, every bound of
    the range is milli-representable and the step is at least 1m."""
    if not fractional_capacity_range:
        return False
    for i, q in enumerate((valid_range.min, valid_range.max, valid_range.step)):
        if q is None:
            continue
        milli = safe_milli_value(q)
        if milli is None:
            return False
        if i == 2 and milli < 1:
            return False
    return True


def _from_nanos(nanos: int, fmt: str) -> Quantity:
    return parse_quantity(_canonical_text(nanos, fmt))


def _round_up_range(requested: Quantity, valid_range: Any, fractional_capacity_range: bool) -> Quantity:
    """``roundUpRange``."""
    if requested < valid_range.min:
        return valid_range.min
    step = valid_range.step
    if step is None:
        return requested
    fmt = _format_of(step)
    if use_milli(valid_range, fractional_capacity_range):
        requested_milli = safe_milli_value(requested)
        if requested_milli is None:
            raise CapacityRequestNotRepresentable(f"{CapacityRequestNotRepresentable.BASE}: request "
                                                  f"{canonical(requested)} is not a representable milli value")
        step_milli, min_milli = step.milli_value(), valid_range.min.milli_value()
        added = requested_milli - min_milli
        n = _go_div(added, step_milli)
        if _go_mod(added, step_milli) != 0:
            n += 1
        if n > _go_div(INT64_MAX - min_milli, step_milli):
            raise CapacityRequestNotRepresentable(f"{CapacityRequestNotRepresentable.BASE}: rounding request "
                                                  f"{canonical(requested)} up to the next step passes the milli-value "
                                                  f"range")
        return _from_nanos((min_milli + step_milli * n) * _NANOS_PER_MILLI, fmt)
    if requested.as_fraction() > INT64_MAX:
        raise CapacityRequestNotRepresentable(f"{CapacityRequestNotRepresentable.BASE}: request {canonical(requested)} "
                                              f"exceeds MaxInt64")
    requested_int, step_int, min_int = requested.value(), step.value(), valid_range.min.value()
    added = requested_int - min_int
    n = _go_div(added, step_int)
    if _go_mod(added, step_int) != 0:
        n += 1
    if min_int >= 0 and n > _go_div(INT64_MAX - min_int, step_int):
        raise CapacityRequestNotRepresentable(f"{CapacityRequestNotRepresentable.BASE}: rounding request "
                                              f"{canonical(requested)} up to the next step passes MaxInt64")
    return _from_nanos((min_int + step_int * n) * _NANOS_PER_UNIT, fmt)


def _go_div(a: int, b: int) -> int:
    """Go's integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _go_mod(a: int, b: int) -> int:
    return a - b * _go_div(a, b)


def _round_up_valid_values(requested: Quantity, valid_values: tuple[Quantity, ...]) -> Quantity:
    """``roundUpValidValues``: the first valid value >= the request, else the request."""
    for value in valid_values:
        if requested <= value:
            return value
    return requested


def calculate_consumed_capacity(requested: Quantity | None, value: Quantity, policy: Any,
                                fractional_capacity_range: bool) -> Quantity:
    """``calculateConsumedCapacity``: what a request (None: it names no amount) consumes of a
    capacity ``value`` with ``policy`` (a CapacityRequestPolicy or None)."""
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default
        return value
    if policy is None:
        return requested
    if policy.valid_range is not None and policy.valid_range.min is not None:
        return _round_up_range(requested, policy.valid_range, fractional_capacity_range)
    if policy.valid_values:
        return _round_up_valid_values(requested, policy.valid_values)
    return requested


def _violate_valid_range(requested: Quantity, valid_range: Any, fractional_capacity_range: bool) -> bool:
    if valid_range.max is not None and requested > valid_range.max:
        return True
    if valid_range.step is not None:
        if use_milli(valid_range, fractional_capacity_range):
            req = safe_milli_value(requested)
            if req is None:
                return True
            step, low = valid_range.step.milli_value(), valid_range.min.milli_value()
        else:
            req, step, low = requested.value(), valid_range.step.value(), valid_range.min.value()
        if _go_mod(req - low, step) != 0:
            return True
    return False


def violates_policy(requested: Quantity, policy: Any, fractional_capacity_range: bool) -> bool:
    """``violatesPolicy``. (Upstream compares the value with the default by Go struct equality,
    which can tell apart equal values of different representations; the policy checks after it
    give the same answer for a default the API server accepted, so the value is compared.)"""
    if policy is None:
        return False
    if policy.default is not None and requested == policy.default:
        return False
    if policy.valid_range is not None:
        return _violate_valid_range(requested, policy.valid_range, fractional_capacity_range)
    if policy.valid_values:
        return not any(requested == v for v in policy.valid_values)
    return False


def cmp_request_over_capacity(current: Mapping[str, Fraction], requests: Mapping[str, Quantity] | None,
                              device: Any, allocating: Mapping[str, Fraction] | None,
                              fractional_capacity_range: bool) -> bool:
    """``CmpRequestOverCapacity``: whether the request fits the device's capacities next to
    ``current`` (allocated) and ``allocating`` (being allocated in this search). Raises
    :class:`CapacityError` for a request that cannot be represented or resolves negative."""
    if not requests and not current and not allocating and _plain_capacity(device):
        # (nothing requested, held or being allocated, no policy, no negative value: every
        # capacity is consumed whole, which fits; upstream's loop answers true: most devices)
        return True
    return _cmp_request_over_capacity_in_full(current, requests, device, allocating, fractional_capacity_range)


def _cmp_request_over_capacity_in_full(current: Mapping[str, Fraction], requests: Mapping[str, Quantity] | None,
                                       device: Any, allocating: Mapping[str, Fraction] | None,
                                       fractional_capacity_range: bool) -> bool:
    """:func:`cmp_request_over_capacity` without its shortcut: upstream's loops."""
    capacity = device.capacity
    policies = device.capacity_policies
    if requests:
        for name in requests:
            if name not in capacity:
                return False
    consumed: dict[str, Quantity] = {}
    for name, value in capacity.items():
        requested = requests.get(name) if requests else None
        try:
            amount = calculate_consumed_capacity(requested, value, policies.get(name), fractional_capacity_range)
        except CapacityRequestNotRepresentable as e:
            raise CapacityRequestNotRepresentable(f'capacity "{name}": {e}') from None
        if amount.sign() < 0:
            raise NegativeCapacity(f'capacity "{name}": capacity value is negative')
        consumed[name] = amount
    for name, value in capacity.items():
        amount = consumed[name]
        if violates_policy(amount, policies.get(name), fractional_capacity_range):
            return False
        total = current.get(name, Fraction(0)) + amount.as_fraction()
        if allocating is not None and name in allocating:
            total += allocating[name]
        if total > value.as_fraction():
            return False
    return True


def _plain_capacity(device: Any) -> bool:
    """Whether ``device`` has no request policy and no negative capacity value."""
    return not device.capacity_policies and all(v.sign() >= 0 for v in device.capacity.values())


def consumed_capacity_from_request(requests: Mapping[str, Quantity] | None, device: Any,
                                   fractional_capacity_range: bool) -> dict[str, Quantity]:
    """``GetConsumedCapacityFromRequest``: for each capacity of the device, what the request
    consumes (as upstream writes it into the allocation result)."""
    out: dict[str, Quantity] = {}
    for name, value in device.capacity.items():
        requested = requests.get(name) if requests else None
        try:
            amount = calculate_consumed_capacity(requested, value, device.capacity_policies.get(name),
                                                 fractional_capacity_range)
        except CapacityRequestNotRepresentable as e:
            raise CapacityRequestNotRepresentable(f'capacity "{name}": {e}') from None
        out[name] = amount
    return out


# -- ConsumedCapacity / ConsumedCapacityCollection (schedulerapi) ------------------------------------
def add_capacity(into: dict[str, Fraction], added: Mapping[str, Any]) -> None:
    """``ConsumedCapacity.Add``."""
    for name, q in added.items():
        into[name] = into.get(name, Fraction(0)) + _fraction(q)


def sub_capacity(into: dict[str, Fraction], subtracted: Mapping[str, Any]) -> None:
    """``ConsumedCapacity.Sub``: names not present are ignored."""
    for name, q in subtracted.items():
        if name in into:
            into[name] -= _fraction(q)


def capacity_empty(capacity: Mapping[str, Fraction]) -> bool:
    """``ConsumedCapacity.Empty``: every amount zero."""
    return all(v == 0 for v in capacity.values())


def _fraction(q: Any) -> Fraction:
    return q.as_fraction() if isinstance(q, Quantity) else Fraction(q)


class ConsumedCapacityCollection(dict):
    """``ConsumedCapacityCollection``: device id -> consumed capacity (name -> amount)."""

    def insert(self, device_id: Any, consumed: Mapping[str, Any]) -> None:
        """``Insert``: add to the device's entry, creating it."""
        entry = self.get(device_id)
        if entry is None:
            self[device_id] = {name: _fraction(q) for name, q in consumed.items()}
        else:
            add_capacity(entry, consumed)

    def remove(self, device_id: Any, consumed: Mapping[str, Any]) -> None:
        """``Remove``: subtract; the entry goes when it becomes empty (all zero)."""
        entry = self.get(device_id)
        if entry is not None:
            sub_capacity(entry, consumed)
            if capacity_empty(entry):
                del self[device_id]
