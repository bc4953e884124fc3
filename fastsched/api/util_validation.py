"""apimachinery's ``util/validation``: names, label keys and values, ports, percentages.

Each ``is_*`` function returns upstream's problem messages (empty when the value is valid),
verbatim, including ``RegexError``'s spacing; lengths are Go's byte lengths. Shared by the API
objects' validation and the configuration's.
"""
from __future__ import annotations

import functools
import re

_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
              "alphanumeric character")
_QNAME_RE = re.compile(_QNAME_FMT)
_LABEL_VALUE_FMT = f"({_QNAME_FMT})?"
_LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
                    "'.', and must start and end with an alphanumeric character")
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
                      "must start and end with an alphanumeric character")
_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                          "'-' or '.', and must start and end with an alphanumeric character")
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)
_PERCENT_FMT = "[0-9]+%"
_PERCENT_RE = re.compile(_PERCENT_FMT)
_PORT_NAME_CHARSET_RE = re.compile("[-a-z0-9]+")
_PORT_NAME_LETTER_RE = re.compile("[a-z]")


def byte_length(value: str) -> int:
    """Go's ``len(string)``: the length in bytes (an ASCII string's is its length: no encoding)."""
    return len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """``validation.RegexError`` (with its ``',  or '`` spacing)."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    text = msg + " (e.g. "
    for index, example in enumerate(examples):
        if index:
            text += " or "
        text += f"'{example}', "
    return text + f"regex used for validation is '{fmt}')"


def _max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def _content_max_len_error(length: int) -> str:
    # k8s.io/apimachinery@v0.37.2 api/validate/content/errors.go: MaxLenError. Label keys and
    # values are validated by the content package since 1.35 (util/validation's IsQualifiedName
    # and IsValidLabelValue are aliases of content.IsLabelKey and content.IsLabelValue), which
    # counts bytes; util/validation's own MaxLenError still says "characters"
    return f"must be no more than {length} bytes"


def _inclusive_range_error(low: int, high: int) -> str:
    return f"must be between {low} and {high}, inclusive"


def is_dns1123_label(value: str) -> list[str]:
    """``validation.IsDNS1123Label``."""
    return list(dns1123_label_errors(value))


@functools.lru_cache(maxsize=16384)
def dns1123_label_errors(value: str) -> tuple[str, ...]:
    errors = []
    if byte_length(value) > 63:
        errors.append(_max_len_error(63))
    if _DNS1123_LABEL_RE.fullmatch(value) is None:
        if _DNS1123_SUBDOMAIN_RE.fullmatch(value) is not None:
            errors.append("must not contain dots")
        else:
            errors.append(_regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return tuple(errors)


def is_dns1123_subdomain(value: str) -> list[str]:
    """``validation.IsDNS1123Subdomain``."""
    return list(dns1123_subdomain_errors(value))


@functools.lru_cache(maxsize=16384)
def dns1123_subdomain_errors(value: str) -> tuple[str, ...]:
    errors = []
    if byte_length(value) > 253:
        errors.append(_max_len_error(253))
    if _DNS1123_SUBDOMAIN_RE.fullmatch(value) is None:
        errors.append(_regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return tuple(errors)


def is_qualified_name(value: str) -> list[str]:
    """``validation.IsQualifiedName`` (v0.37.2: ``content.IsLabelKey``): ``name`` or ``prefix/name``
    (label keys and the like)."""
    return list(qualified_name_errors(value))


@functools.lru_cache(maxsize=16384)
def qualified_name_errors(value: str) -> tuple[str, ...]:
    errors: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            # content.IsDNS1123Subdomain: its length error in bytes
            errors.extend("prefix part " + msg.replace(_max_len_error(253), _content_max_len_error(253))
                          for msg in dns1123_subdomain_errors(prefix))
    else:
        return ("a valid label key " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",)
    if not name:
        errors.append("name part must be non-empty")
    elif byte_length(name) > 63:
        errors.append("name part " + _content_max_len_error(63))
    if _QNAME_RE.fullmatch(name) is None:
        errors.append("name part " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return tuple(errors)


def is_valid_label_value(value: str) -> list[str]:
    """``validation.IsValidLabelValue``."""
    return list(label_value_errors(value))


@functools.lru_cache(maxsize=16384)
def label_value_errors(value: str) -> tuple[str, ...]:
    errors = []
    if byte_length(value) > 63:
        errors.append(_content_max_len_error(63))
    if _LABEL_VALUE_RE.fullmatch(value) is None:
        errors.append(_regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return tuple(errors)


def is_valid_port_num(port: int) -> list[str]:
    return [] if 1 <= port <= 65535 else [_inclusive_range_error(1, 65535)]


def is_valid_port_name(port: str) -> list[str]:
    """``validation.IsValidPortName``."""
    errors = []
    if byte_length(port) > 15:
        errors.append(_max_len_error(15))
    if _PORT_NAME_CHARSET_RE.fullmatch(port) is None:
        errors.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if _PORT_NAME_LETTER_RE.search(port) is None:
        errors.append("must contain at least one letter (a-z)")
    if "--" in port:
        errors.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errors.append("must not begin or end with a hyphen")
    return errors


def is_valid_percent(value: str) -> list[str]:
    if _PERCENT_RE.fullmatch(value) is None:
        return [_regex_error("a valid percent string must be a numeric string followed by an ending '%'",
                             _PERCENT_FMT, "1%", "93%")]
    return []
