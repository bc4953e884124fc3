"""FieldError / ConfigError formatting and Go duration handling."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from fastsched.config import ConfigError, ErrorType, FieldError, FieldPath
from fastsched.config._decode import format_duration, parse_duration
from fastsched.util.field import GoStruct, _go_quote_escaped, go_float, go_quote


class TestFieldError:
    def test_invalid_int(self):
        err = FieldError.invalid("parallelism", 0, "should be an integer value greater than zero")
        assert str(err) == "parallelism: Invalid value: 0: should be an integer value greater than zero"
        assert err.type is ErrorType.INVALID

    def test_duplicate_string(self):
        assert str(FieldError.duplicate("profiles[1].schedulerName", "foo")) == (
            'profiles[1].schedulerName: Duplicate value: "foo"'
        )

    def test_required_without_and_with_detail(self):
        assert str(FieldError.required("profiles")) == "profiles: Required value"
        assert str(FieldError.required("a.b", "can not be empty")) == "a.b: Required value: can not be empty"

    def test_forbidden_shows_no_value(self):
        assert str(FieldError.forbidden("x", "not allowed")) == "x: Forbidden: not allowed"

    def test_not_supported_lists_quoted_values(self):
        err = FieldError.not_supported("type", "Foo", ["LeastAllocated", "MostAllocated"])
        assert str(err) == 'type: Unsupported value: "Foo": supported values: "LeastAllocated", "MostAllocated"'

    def test_complex_values_render_as_json(self):
        assert str(FieldError.invalid("v", ["a", "b"], "d")) == 'v: Invalid value: ["a","b"]: d'
        assert str(FieldError.invalid("v", None, "d")) == "v: Invalid value: null: d"
        assert str(FieldError.invalid("v", {"b": 1, "a": True}, "d")) == 'v: Invalid value: {"a":true,"b":1}: d'
        assert (
            str(FieldError.invalid("v", GoStruct(Name="x", Weight=0), "d"))
            == 'v: Invalid value: {"Name":"x","Weight":0}: d'
        )

    def test_scalar_values(self):
        assert str(FieldError.invalid("v", True, "d")) == "v: Invalid value: true: d"
        assert str(FieldError.invalid("v", 1.5, "d")) == "v: Invalid value: 1.5: d"

    def test_unknown_field_mirrors_strict_decoder(self):
        assert str(FieldError.unknown_field("profiles[0].plugins.scor")) == 'unknown field "profiles[0].plugins.scor"'

    def test_field_path(self):
        p = FieldPath("profiles").index(0).child("pluginConfig").index(2).child("args", "x")
        assert str(p) == "profiles[0].pluginConfig[2].args.x"
        assert str(FieldPath().child("a").key("k")) == "a[k]"


class TestConfigError:
    def test_single_error_message(self):
        err = ConfigError([FieldError.required("profiles")])
        assert str(err) == "profiles: Required value"
        assert isinstance(err, ValueError)

    def test_several_errors_aggregate_and_dedupe(self):
        a, b = FieldError.required("a"), FieldError.required("b")
        err = ConfigError([a, b, a])
        assert str(err) == "[a: Required value, b: Required value]"
        assert err.errors == [a, b]

    def test_document_message(self):
        err = ConfigError(message="invalid YAML: line 1, column 2: oops")
        assert str(err) == "invalid YAML: line 1, column 2: oops"
        assert err.errors == []


class TestGoFormatting:
    @pytest.mark.parametrize(
        "value, text",
        [
            (1.0, "1"),
            (2.5, "2.5"),
            (100000.0, "100000"),
            (1e6, "1e+06"),
            (1234567.0, "1.234567e+06"),
            (1e-05, "1e-05"),
            (-0.5, "-0.5"),
        ],
    )
    def test_go_float(self, value, text):
        assert go_float(value) == text

    def test_go_quote(self):
        assert go_quote('a"b\\c\n\x01é') == '"a\\"b\\\\c\\n\\x01é"'

    @given(st.text(alphabet=st.characters(max_codepoint=0x2FF)) | st.text(alphabet="ab \"\\\t\x7f-_.0"))
    def test_go_quote_fast_path_agrees_with_the_escaping_loop(self, s):
        # (the fast path returns plain ASCII as it is; the loop is strconv.Quote's rules)
        assert go_quote(s) == _go_quote_escaped(s)


class TestDurations:
    @pytest.mark.parametrize(
        "text, seconds",
        [
            ("30s", 30.0),
            ("1m30s", 90.0),
            ("1.5h", 5400.0),
            ("500ms", 0.5),
            ("0", 0.0),
            ("-2s", -2.0),
            ("1h0m0s", 3600.0),
            ("2us", 2e-6),
        ],
    )
    def test_parse(self, text, seconds):
        assert parse_duration(text) == pytest.approx(seconds)

    @pytest.mark.parametrize(
        "text, message",
        [
            ("", 'time: invalid duration ""'),
            ("abc", 'time: invalid duration "abc"'),
            ("30", 'time: missing unit in duration "30"'),
            ("1d", 'time: unknown unit "d" in duration "1d"'),
        ],
    )
    def test_parse_errors(self, text, message):
        with pytest.raises(ValueError, match=message):
            parse_duration(text)

    @pytest.mark.parametrize(
        "seconds, text",
        [
            (0, "0s"),
            (5, "5s"),
            (90, "1m30s"),
            (3600, "1h0m0s"),
            (7200.5, "2h0m0.5s"),
            (0.0015, "1.5ms"),
            (1.5e-6, "1.5\u00b5s"),
            (-2, "-2s"),
        ],
    )
    def test_format(self, seconds, text):
        assert format_duration(seconds) == text
