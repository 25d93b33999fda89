"""Kubernetes OpenAPI schema checks, offline, with the JSON schemas that PyPI's
kubernetes-validate (1.37.0) bundles. Of the versions it ships (1.25 to 1.37) this uses
Kubernetes 1.27, the version these manifests were written and first checked against; its
"-strict" variant sets additionalProperties: false on every object type.

  schema_errors(obj) -> ["Deployment/lm-server: /spec/replicas must be integer", ...]

Reported: wrong types, missing required fields, values outside an enum, bad formats (byte,
int32, int64, double, date-time) and fields the schema does not know (a misspelt
`readinesProbe` would otherwise pass: the API server drops unknown fields silently), as
"unknown field /spec/template/spec/containers/0/readinesProbe". Every error of an object is
listed, not only the first (kubernetes_validate.validate() stops at the first, so this module
builds the same Draft 2020-12 validator over the same files and collects them all).
"""
import datetime
import functools
import importlib.resources
import json
import re

import jsonschema
import kubernetes_validate
import referencing

# The schema folder inside kubernetes-validate: Kubernetes 1.27, strict (unknown fields fail).
KUBERNETES_VERSION = "1.27"
SCHEMA_DIR = "v1.27.0-local-strict"


def object_name(obj):
    kind = obj.get("kind") if isinstance(obj, dict) else None
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    return f"{kind or '?'}/{name or '?'}"


def _schemas():
    folder = importlib.resources.files(kubernetes_validate) / "kubernetes-json-schema" / SCHEMA_DIR
    if not folder.is_dir():
        raise RuntimeError(f"kubernetes-validate {kubernetes_validate.__version__} has no "
                           f"{SCHEMA_DIR} schemas (scripts/setup.sh pins kubernetes-validate==1.37.0)")
    return folder


@functools.lru_cache(maxsize=None)
def _registry():
    definitions = json.loads((_schemas() / "_definitions.json").read_text())
    return referencing.Resource.from_contents(definitions) @ referencing.Registry()


def _schema_file(api_version, kind):
    """kubernetes-validate's file name for apiVersion/kind: the group's first label and the
    version ("apps/v1" -> apps-v1, "rbac.authorization.k8s.io/v1" -> rbac-v1, "v1" -> v1). The
    schema's apiVersion enum then rejects a look-alike group."""
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    return f"{kind.lower()}-{group_version}.json"


@functools.lru_cache(maxsize=None)
def _validator(api_version, kind):
    """The validator for apiVersion/kind, or None when kubernetes-validate has no schema."""
    if not re.fullmatch(r"[A-Za-z0-9.\-/]+", api_version) or not re.fullmatch(r"[A-Za-z0-9]+", kind):
        return None
    path = _schemas() / _schema_file(api_version, kind)
    if not path.is_file():
        return None
    schema = json.loads(path.read_text())
    return jsonschema.Draft202012Validator(schema, registry=_registry(), format_checker=_FORMATS)


# Formats the Kubernetes schemas use. jsonschema checks none of them by default.
_FORMATS = jsonschema.FormatChecker(formats=())
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
_DATE_TIME = re.compile(r"(\d{4})-(\d\d)-(\d\d)[Tt ]([01]\d|2[0-3]):([0-5]\d):([0-5]\d|60)"
                        r"(?:\.\d+)?(?:[Zz]|[+-](?:[01]\d|2[0-3]):?[0-5]\d)")


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool) or isinstance(v, float) and v.is_integer()


@_FORMATS.checks("byte")
def _byte(v):
    return not isinstance(v, str) or _BASE64.fullmatch(v) is not None


@_FORMATS.checks("int32")
def _int32(v):
    return not _is_int(v) or -2**31 <= v < 2**31


@_FORMATS.checks("int64")
def _int64(v):
    return not _is_int(v) or -2**63 <= v < 2**63


@_FORMATS.checks("double")
def _double(v):
    return True  # any JSON number: the schema's "number" type already says it


@_FORMATS.checks("date-time")
def _date_time(v):
    if not isinstance(v, str):
        return True
    m = _DATE_TIME.fullmatch(v)
    if not m:
        return False
    try:
        datetime.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return False
    return True


def _normalized(obj):
    """Kustomize folds long base64 values of a Secret over several lines; the API server's
    decoder (Go's encoding/base64) skips the newlines, the schema's "byte" format does not."""
    if obj.get("kind") != "Secret" or not isinstance(obj.get("data"), dict):
        return obj
    data = {k: re.sub(r"[\r\n]", "", v) if isinstance(v, str) else v for k, v in obj["data"].items()}
    return {**obj, "data": data}


def _pointer(path):
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _types(schema_type):
    types = schema_type if isinstance(schema_type, list) else [schema_type]
    return ",".join(t for t in types if t != "null") or "null"


def _messages(error):
    """One error of jsonschema as lines of the report."""
    where = _pointer(error.absolute_path)
    v = error.validator
    if v == "additionalProperties" and error.validator_value is False and isinstance(error.instance, dict):
        known = error.schema.get("properties", {})
        patterns = error.schema.get("patternProperties", {})
        return [f"unknown field {where}/{key}" for key in error.instance
                if key not in known and not any(re.search(p, key) for p in patterns)]
    if v == "required" and isinstance(error.instance, dict):
        return [f"{where or '/'} must have required property '{key}'"
                for key in error.validator_value if key not in error.instance]
    if v == "type":
        return [f"{where or '/'} must be {_types(error.validator_value)}"]
    if v == "enum":
        allowed = ", ".join(json.dumps(x) for x in error.validator_value)
        return [f"{where or '/'} must be equal to one of the allowed values: {allowed}"]
    if v == "format":
        return [f"{where or '/'} must match format \"{error.validator_value}\""]
    if v in ("oneOf", "anyOf"):
        kinds = " or ".join(_types(s.get("type")) for s in error.validator_value if isinstance(s, dict))
        return [f"{where or '/'} must be {kinds or 'one of the allowed shapes'}"]
    return [f"{where or '/'}: {error.message}"]


def schema_errors(obj):
    name = object_name(obj)
    if not isinstance(obj, (dict, list)):
        return [f"{name}: not an object"]
    api_version = obj.get("apiVersion") if isinstance(obj, dict) else None
    kind = obj.get("kind") if isinstance(obj, dict) else None
    validator = None
    if isinstance(api_version, str) and isinstance(kind, str):
        validator = _validator(api_version, kind)
    if validator is None:
        return [f"{name}: no Kubernetes schema for apiVersion '{_quoted(api_version)}' kind '{_quoted(kind)}'"]
    errors = []
    for error in sorted(validator.iter_errors(_normalized(obj)), key=lambda e: list(map(str, e.absolute_path))):
        errors.extend(f"{name}: {line}" for line in _messages(error))
    return list(dict.fromkeys(errors))


def _quoted(v):
    return "undefined" if v is None else str(v)


def check_installed():
    """Raises when kubernetes-validate lacks the schemas this module uses."""
    _registry()
    if _validator("apps/v1", "Deployment") is None:
        raise RuntimeError(f"kubernetes-validate's {SCHEMA_DIR} has no Deployment schema")
