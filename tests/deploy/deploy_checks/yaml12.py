"""YAML 1.2 (core schema) on top of PyYAML, which implements YAML 1.1.

kubectl and lmtrain's programs read YAML 1.2: `yes`, `on` and `2024-01-01` are strings there,
`012` is the integer 12 and `0o17` is octal, while PyYAML's safe loader would turn them into a
boolean, a date, the octal 10 and a string. Duplicate keys in a map are an error (PyYAML keeps the
last one silently), and `<<` is an ordinary key (no YAML 1.1 merge keys).

  load_all(text) -> [obj, ...]   (empty documents left out)
  load(text) -> obj              (raises yaml.YAMLError, also for more than one document)
"""
import math
import re

import yaml

_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT = re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
                    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$")
_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")


class Loader(yaml.SafeLoader):
    """A safe loader with YAML 1.2's core schema and unique map keys."""

    yaml_implicit_resolvers = {}

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    duplicate = key in seen
                    seen.add(key)
                except TypeError:
                    continue  # an unhashable key: reported by the base class
                if duplicate:
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping", node.start_mark,
                        f"found duplicate key {key!r}", key_node.start_mark)
        return super().construct_mapping(node, deep=deep)


def _int(loader, node):
    value = loader.construct_scalar(node)
    if value.startswith("0o"):
        return int(value[2:], 8)
    if value.startswith("0x"):
        return int(value[2:], 16)
    return int(value, 10)


def _float(loader, node):
    value = loader.construct_scalar(node).lower()
    if value.endswith(".inf"):
        return -math.inf if value.startswith("-") else math.inf
    if value == ".nan":
        return math.nan
    return float(value)


Loader.add_implicit_resolver("tag:yaml.org,2002:bool", _BOOL, list("tTfF"))
Loader.add_implicit_resolver("tag:yaml.org,2002:null", _NULL, ["~", "n", "N", ""])
Loader.add_implicit_resolver("tag:yaml.org,2002:int", _INT, list("-+0123456789"))
Loader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT, list("-+0123456789."))
Loader.add_constructor("tag:yaml.org,2002:bool",
                       lambda loader, node: loader.construct_scalar(node).lower() == "true")
Loader.add_constructor("tag:yaml.org,2002:int", _int)
Loader.add_constructor("tag:yaml.org,2002:float", _float)


def load_all(text):
    return [doc for doc in yaml.load_all(text, Loader=Loader) if doc is not None]


def load(text):
    return yaml.load(text, Loader=Loader)
