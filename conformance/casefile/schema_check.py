"""The schema check of a case file (case.schema.json beside this module, the one copy of the
schema: docs/case-format.md links to it), with messages that name the key and its line."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import fastjsonschema
import jsonschema

from conformance.casefile.errors import CaseFileError, short
from conformance.casefile.safe_yaml import line_of, plain


@cache
def schema() -> dict[str, Any]:
    """The JSON Schema of a case file (case.schema.json, package data beside this module)."""
    text = resources.files("conformance.casefile").joinpath("case.schema.json").read_text()
    return json.loads(text)


class _Validator:
    """A schema check with a fast path: fastjsonschema's compiled check (draft-07 form of the
    same schema) decides; only a document that fails it goes through jsonschema, whose
    best_match gives the message and the path."""

    def __init__(self, schema_doc: dict[str, Any]) -> None:
        self.full = jsonschema.Draft202012Validator(schema_doc)
        draft7 = json.loads(json.dumps(schema_doc).replace('"#/$defs/', '"#/definitions/'))
        draft7["definitions"] = draft7.pop("$defs")
        draft7["$schema"] = "http://json-schema.org/draft-07/schema#"
        draft7.pop("$id", None)
        self.fast = fastjsonschema.compile(draft7)

    def errors(self, instance: Any) -> list[jsonschema.ValidationError]:
        try:
            self.fast(instance)
        except fastjsonschema.JsonSchemaException:
            return list(self.full.iter_errors(instance))
        return []


@cache
def validators() -> tuple[_Validator, _Validator]:
    """The file-level validator, and the one for a case with its defaults merged in."""
    whole = schema()
    case = {"$schema": whole["$schema"], "$defs": whole["$defs"], "$ref": "#/$defs/case"}
    return _Validator(whole), _Validator(case)


def schema_error(validator: _Validator, doc: Any, path: str | Path,
                  prefix: Sequence[Any] = ()) -> CaseFileError | None:
    try:
        errors = validator.errors(plain(doc))
        if not errors:
            return None
        err = jsonschema.exceptions.best_match(errors)
        message = schema_message(err)
    except RecursionError:  # MAX_DEPTH keeps documents far from this
        return CaseFileError(path, getattr(doc, "line", None), f"{'/'.join(map(str, prefix))}: "
                             "nested too deeply to check against the schema")
    where = "/".join(str(p) for p in [*prefix, *err.absolute_path]) or "(top)"
    at = [*err.absolute_path, *_unknown_keys(err)[:1]]  # an unknown key: its own line
    return CaseFileError(path, line_of(doc, at), f"{where}: {short(message)}")


def _unknown_keys(err: jsonschema.ValidationError) -> list[Any]:
    """The keys an 'additionalProperties: false' error is about."""
    if err.validator != "additionalProperties" or err.validator_value is not False or (
            not isinstance(err.instance, dict)):
        return []
    known = _properties(err)
    return [k for k in err.instance if k not in known]


def _properties(err: jsonschema.ValidationError) -> Mapping[str, Any]:
    """The 'properties' of the schema (a mapping there) an error is about."""
    return err.schema.get("properties", {}) if isinstance(err.schema, Mapping) else {}


def schema_message(err: jsonschema.ValidationError) -> str:
    if err.validator == "oneOf" and isinstance(err.instance, dict):
        keys = ", ".join(sorted(err.instance)) or "nothing"
        return f"this combination of keys ({keys}) is not one of the allowed forms"
    unknown = _unknown_keys(err)
    if unknown:
        return (f"unknown key{'s' if len(unknown) > 1 else ''} "
                f"{', '.join(repr(k) for k in unknown)}; allowed here: "
                f"{', '.join(_properties(err)) or 'none'}")
    if err.validator == "pattern" and list(err.absolute_path)[-1:] == ["id"]:
        return (f"case id {short(repr(err.instance))}: an id is segments of letters, digits, "
                "'_', '.' and '-' joined by '/', none of them empty, '.' or '..' (it names "
                "the case's folder in `dmlconf export`)")
    key = list(err.absolute_path)[-1:]
    if (err.validator == "type" and key in (["feature_level"], ["feature_level_below"])
            and isinstance(err.instance, int) and not isinstance(err.instance, bool)):
        return (f"{err.instance} is a number: YAML reads an unquoted 2_1 as 21; quote the "
                f"level: {key[0]}: \"2_1\"")
    return err.message
