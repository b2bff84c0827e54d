"""The static code gate: every known way out of a pure handler is rejected, every builtin environment and the
ordinary idioms of a handler still pass. The gate is a first filter; the sandbox is the boundary."""

from __future__ import annotations

import pytest
from builtin_fixtures import builtin_bundle

from abstaingen.generators.builtin.domains import DOMAINS
from abstaingen.validators.code_gate import check_code, inspect_source, module_members

# Dunder names are built at run time (`D + 'globals' + D`) so that a case is caught by the rule it is
# about, not by the rule against dunder strings.
D = "D = '_' * 2\n"

# name: (source defining f, a fragment the gate's report must contain)
BYPASSES = {
    # 1. modules reached through allowed ones
    "typing.sys": ("import typing\ndef f(state):\n    return typing.sys.modules['os'].getpid()\n", "'sys'"),
    "a module of typing's not on any denylist": ("import typing\ndef f(state):\n    return typing.functools\n",
                                                 "typing.functools is not allowed"),
    "dataclasses.sys": ("import dataclasses\ndef f(state):\n    return dataclasses.sys.modules['os']\n",
                        "'dataclasses' is not allowed"),
    "collections._sys": ("import collections\ndef f(state):\n    return collections._sys.modules['os']\n",
                         "'_sys'"),
    "import as, then a private handle": ("import collections as c\ndef f(state):\n    return c._sys.modules['os']\n",
                                         "'_sys'"),
    "module aliased to a variable": ("import typing\ndef f(state):\n    m = typing\n    return m.sys.modules['os']\n",
                                     "module 'typing' may only be used as typing.<member>"),
    "from typing import sys": ("from typing import sys\ndef f(state):\n    return sys.modules['os']\n",
                               "typing.sys is not allowed"),
    "module as a lambda default": ("import typing\ng = lambda m=typing: m.sys\ndef f(state):\n    return g()\n",
                                   "module 'typing' may only"),
    "module passed to a function": ("import typing\ndef g(m):\n    return m.modules\n"
                                    "def f(state):\n    return g(typing)\n", "module 'typing' may only"),
    "module in a container": ("import typing\ndef f(state):\n    return [typing][0].sys\n", "module 'typing' may only"),
    "module through operator.getitem": ("import operator, typing\ndef f(state):\n"
                                        "    return operator.getitem(vars(typing), 'sys')\n", "module 'typing' may only"),
    "submodule as a member": ("import json\ndef f(state):\n    return json.decoder.scanstring\n", "json.decoder"),
    "from json import a submodule": ("from json import decoder\ndef f(state):\n    return decoder\n",
                                     "json.decoder is not allowed"),
    "dotted import": ("import collections.abc\ndef f(state):\n    return collections.abc\n",
                      "'collections.abc' is not allowed"),
    "star import": ("from typing import *\ndef f(state):\n    return get_type_hints(f)\n", "typing.*"),
    "import in a class body": ("class C:\n    import typing\ndef f(state):\n    return C.typing.functools\n",
                               "imports inside a class body"),
    "shadowing import alias": ("import typing as json\ndef f(state):\n    return json.functools\n",
                               "typing.functools is not allowed"),
    # 2. builtins as attributes
    "builtins module's eval": ("import typing\ndef f(state):\n    return typing.sys.modules['builtins'].eval('1')\n",
                               "'sys'"),
    "eval as an attribute": ("def f(state, b):\n    return b.builtins.eval('1')\n", "'builtins'"),
    # 3. attribute names as strings
    "operator.attrgetter": (D + "import operator\ndef f(state):\n"
                            "    return operator.attrgetter(D + 'class' + D + '.' + D + 'base' + D)(state)\n",
                            "'attrgetter'"),
    "from operator import attrgetter": ("from operator import attrgetter as g\ndef f(state):\n    return g('x')\n",
                                        "operator.attrgetter is not allowed"),
    "operator.methodcaller": (D + "import operator\ndef f(state):\n"
                              "    return operator.methodcaller(D + 'subclasses' + D)(int)\n", "'methodcaller'"),
    "string.Formatter().get_field": (D + "import string\ndef f(state):\n"
                                     "    return string.Formatter().get_field('0.' + D + 'globals' + D, (f,), {})\n",
                                     "'Formatter'"),
    "format on a built string": (D + "def f(state):\n    return ('{0.' + D + 'globals' + D + '}').format(f)\n",
                                 ".format is only allowed on a string literal"),
    "format literal with a dunder": ("def f(state):\n    return '{0.__globals__}'.format(f)\n",
                                     ".format is only allowed on a string literal"),
    "format literal reading a frame": ("def f(state):\n    g = (x for x in ())\n"
                                       "    return '{0.gi_frame.f_globals}'.format(g)\n", ".format is only allowed"),
    "format literal with an index": ("def f(state, g):\n    return '{0[x]}'.format(g)\n", ".format is only allowed"),
    "format in a nested spec": ("def f(state, g):\n    return '{0:{1.gi_frame}}'.format(1, g)\n",
                                ".format is only allowed"),
    "format_map": ("def f(state, g):\n    return '{x.gi_frame}'.format_map({'x': g})\n", ".format_map is only"),
    "str.format unbound": ("def f(state, g):\n    return str.format('{0.gi_frame}', g)\n", ".format is only"),
    "format on an f-string": ("def f(state, g):\n    return f'{{0.gi_frame}}'.format(g)\n", ".format is only"),
    # 4. the class pattern in match
    "match class keyword dunder": ("def f(state):\n    match ():\n        case tuple(__class__=c):\n"
                                   "            return c\n", "match keyword"),
    "match class keyword frame": ("def f(state, g):\n    match g:\n        case G(gi_frame=fr):\n"
                                  "            return fr\n", "match keyword: attribute 'gi_frame'"),
    # 5. importlib through sys.modules
    "importlib through sys.modules": ("import typing\ndef f(state):\n"
                                      "    return typing.sys.modules['importlib'].import_module('os')\n", "'sys'"),
    "importlib as an attribute": ("def f(state, m):\n    return m.importlib.import_module('os')\n", "'importlib'"),
    # 7. code-evaluating helpers
    "typing.get_type_hints": ("import typing\ndef g(x: 'globals()'):\n    pass\n"
                              "def f(state):\n    return typing.get_type_hints(g)['x']\n", "'get_type_hints'"),
    "typing.ForwardRef": ("from typing import ForwardRef\ndef f(state):\n    return ForwardRef('globals()')\n",
                          "typing.ForwardRef is not allowed"),
    "typing.NamedTuple": ("from typing import NamedTuple\ndef f(state):\n    return NamedTuple\n",
                          "typing.NamedTuple is not allowed"),
    "dataclasses.make_dataclass": ("import dataclasses\ndef f(state):\n    return dataclasses.make_dataclass('X', [])\n",
                                   "'make_dataclass'"),
    "collections.namedtuple": ("import collections\ndef f(state):\n    return collections.namedtuple('P', 'a')\n",
                               "'namedtuple'"),
    "from collections import namedtuple": ("from collections import namedtuple\ndef f(state):\n    return namedtuple\n",
                                           "collections.namedtuple is not allowed"),
    "singledispatch evaluates annotations": ("import functools\n@functools.singledispatch\ndef g(x):\n    pass\n"
                                             "def f(state):\n    return g\n", "'singledispatch'"),
    "update_wrapper copies a namespace": ("import functools\ndef f(state, holder):\n"
                                          "    return functools.update_wrapper(holder, f)\n", "'update_wrapper'"),
    "functools.wraps": ("from functools import wraps\ndef f(state):\n    return wraps\n",
                        "functools.wraps is not allowed"),
    "enum (dropped)": ("import enum\ndef f(state):\n    return enum.Enum\n", "'enum' is not allowed"),
    # more: reflection and introspection without dunders
    "vars": ("def f(state):\n    return vars(state)\n", "'vars'"),
    "dir": ("def f(state):\n    return dir(state)\n", "'dir'"),
    "hasattr": ("def f(state):\n    return hasattr(state, 'x')\n", "'hasattr'"),
    "getattr": ("def f(state):\n    return getattr(state, 'clear')\n", "'getattr'"),
    "license reads files": ("def f(state):\n    return license()\n", "'license'"),
    "mro": ("def f(state):\n    return int.mro()[-1]\n", "'mro'"),
    "state.__class__": ("def f(state):\n    return state.__class__\n", "'__class__'"),
    "private attribute": ("def f(state, x):\n    return x._fields\n", "'_fields'"),
    "exception traceback": ("def f(state):\n    try:\n        1 / 0\n    except ZeroDivisionError as e:\n"
                            "        return e.__traceback__\n", "'__traceback__'"),
    "__builtins__ through a dict key": ("def f(state, g):\n    return g.gi_frame.f_globals['__builtins__']\n",
                                        "dunder"),
    "dunder string alone": ("def f(state, d):\n    return d['__builtins__']\n", "a string naming a dunder"),
    "metaclass keyword": ("class C(metaclass=print):\n    pass\ndef f(state):\n    return C\n", "class keywords"),
    "class keyword argument": ("class C(dict, extra=1):\n    pass\ndef f(state):\n    return 1\n", "class keywords"),
    "dunder method": ("class C:\n    def __getattr__(self, name):\n        return name\ndef f(state):\n    return 1\n",
                      "'__getattr__'"),
    "dunder import alias": ("from math import pi as __builtins__\ndef f(state):\n    return 1\n",
                            "dunder name '__builtins__'"),
    "dunder parameter": ("def f(state, __x=1):\n    return 1\n", "dunder name '__x'"),
    "module attribute assigned": ("import json\ndef f(state):\n    json.dumps = str\n    return 1\n",
                                  "module 'json' is read-only"),
    "module attribute deleted": ("import json\ndef f(state):\n    del json.dumps\n    return 1\n", "read-only"),
    "module data mutated by subscript": ("import decimal\ndef f(state):\n"
                                         "    decimal.DefaultContext.traps[decimal.Inexact] = True\n    return 1\n",
                                         "module 'decimal' is read-only"),
    "decorator from a denied helper": ("import operator\n@operator.attrgetter\ndef f(state):\n    return 1\n",
                                       "'attrgetter'"),
    "async function": ("async def g():\n    return 1\ndef f(state):\n    return g()\n", "async functions"),
    "async generator expression": ("def f(state, s):\n    return (x async for x in s)\n", "async"),
    "global": ("N = 0\ndef f(state):\n    global N\n    N += 1\n    return N\n", "global state"),
    "raise SystemExit": ("def f(state):\n    raise SystemExit(0)\n", "'SystemExit'"),
    "unicode-normalized eval": ("def f(state):\n    return \uff45val('1')\n", "'eval'"),
    "from __future__": ("from __future__ import annotations\ndef f(state):\n    return 1\n", "'__future__'"),
    "relative import": ("from . import x\ndef f(state):\n    return 1\n", "is not allowed"),
}
# 6. frame, code and generator objects without dunders
FRAME_ATTRIBUTES = ["gi_frame", "gi_code", "gi_yieldfrom", "cr_frame", "cr_code", "ag_frame", "f_globals",
                    "f_builtins", "f_locals", "f_back", "f_code", "tb_frame", "tb_next", "co_consts", "co_code",
                    "cell_contents"]
for _attr in FRAME_ATTRIBUTES:
    BYPASSES[f"frame or code: {_attr}"] = (f"def f(state):\n    g = (x for x in ())\n    return g.{_attr}\n",
                                          f"attribute {_attr!r}")
BYPASSES["generator frame to builtins"] = (
    "def f(state):\n    return (x for x in ()).gi_frame.f_globals['__builtins__']\n", "'gi_frame'")

# 7. round 3: a class built from `type` with a runtime-built __match_args__, read by a positional pattern
_METACLASS_ESCAPE = (
    "import typing\n"
    "def f(state):\n"
    "    t = typing.get_origin(typing.Type)\n"
    "    name = '_' * 2 + 'globals' + '_' * 2\n"
    "    meta = t('M', (t,), {'_' * 2 + 'instancecheck' + '_' * 2: lambda cls, obj: True})\n"
    "    matcher = meta('C', (), {'_' * 2 + 'match_args' + '_' * 2: (name,)})\n"
    "    match f:\n"
    "        case matcher(found):\n"
    "            return found['os']\n")
BYPASSES["typing.get_origin hands out type"] = (_METACLASS_ESCAPE, "attribute 'get_origin'")
BYPASSES["positional class pattern"] = (_METACLASS_ESCAPE, "positional class patterns are only allowed")
BYPASSES["positional pattern on a class of the module's"] = (
    "class C(ValueError):\n    pass\ndef f(state):\n    match state:\n        case C(x):\n            return x\n",
    "positional class patterns are only allowed")
BYPASSES["a self-matching builtin rebound"] = (
    "def f(state, str):\n    match state:\n        case str(x):\n            return x\n",
    "the builtin 'str' may not be rebound")
BYPASSES["a self-matching builtin assigned"] = (
    "def f(state):\n    int = state['cls']\n    match state:\n        case int(x):\n            return x\n",
    "the builtin 'int' may not be rebound")
BYPASSES["the clock"] = ("import datetime\ndef f(state):\n    return datetime.datetime.now().isoformat()\n",
                         "attribute 'now'")
BYPASSES["today's date"] = ("from datetime import date\ndef f(state):\n    return date.today().isoformat()\n",
                            "attribute 'today'")
BYPASSES["a per-process hash"] = ("def f(state):\n    return {'fare': 485 * (1 + 2 * (hash('x') % 2))}\n",
                                  "use of 'hash'")
BYPASSES["a per-process id"] = ("def f(state):\n    return id(state) % 7\n", "use of 'id'")
BYPASSES["a dunder in a bytes constant"] = ("def f(state):\n    return b'__globals__'.decode()\n",
                                            "a string naming a dunder")

UNPARSABLE = {
    "deep unary nesting": "x = " + "-" * 100_000 + "1\n",
    "long operator chain": "x = " + "+".join(["1"] * 50_000) + "\n",
    "null byte": "def f(state):\n    return 1\0\n",
}

LEGITIMATE = {
    "dict and list comprehensions": "def f(state, status):\n"
                                    "    ids = [r['id'] for r in state['items'] if r['status'] == status]\n"
                                    "    return {i: len(i) for i in ids}\n",
    "f-strings": "def f(state, n):\n    return {'message': f'{n!r} items, {n / 3:.2f} each, {n=}'}\n",
    "round and sorted with a key": "def f(state):\n"
                                   "    rows = sorted(state['items'], key=lambda r: (r['date'], -r['amount']))\n"
                                   "    return {'total': round(sum(r['amount'] for r in rows), 2)}\n",
    "datetime.date.fromisoformat": "import datetime\ndef f(state, when):\n"
                                   "    day = datetime.date.fromisoformat(when)\n"
                                   "    return (day + datetime.timedelta(days=1)).isoformat()\n",
    "from datetime import date": "from datetime import date, timedelta\ndef f(state, when):\n"
                                 "    return (date.fromisoformat(when) - timedelta(days=7)).weekday()\n",
    "raising ValueError": "def f(state, record_id):\n    for r in state['items']:\n"
                          "        if r['id'] == record_id:\n            return dict(r)\n"
                          "    raise ValueError('No item with id ' + str(record_id))\n",
    "plain str.format": "def f(state, n, who):\n    return '{} items for {who}, {0:>5}'.format(n, who=who)\n",
    "percent formatting": "def f(state, n):\n    return '%d items (%s)' % (n, state['name'])\n",
    "stdlib helpers": "import math, re, json, copy, statistics, heapq, bisect, itertools, functools, operator\n"
                      "from collections import Counter, defaultdict\nfrom decimal import Decimal, ROUND_HALF_UP\n"
                      "import string as s\n"
                      "def f(state, text):\n"
                      "    words = re.findall(r'\\w+', text.lower())\n"
                      "    counts = Counter(words)\n    groups = defaultdict(list)\n"
                      "    for k, g in itertools.groupby(sorted(words)):\n        groups[k[0]].append(len(list(g)))\n"
                      "    amounts = [r['amount'] for r in copy.deepcopy(state['items'])]\n"
                      "    return {'top': heapq.nlargest(2, amounts), 'pos': bisect.bisect_left(sorted(amounts), 3),\n"
                      "            'sum': functools.reduce(operator.add, amounts, 0), 'ceil': math.ceil(1.2),\n"
                      "            'mean': statistics.mean(amounts or [0]), 'json': json.dumps(counts),\n"
                      "            'by': sorted(state['items'], key=operator.itemgetter('id')),\n"
                      "            'cents': str(Decimal('1.005').quantize(Decimal('0.01'), rounding=ROUND_HALF_UP)),\n"
                      "            'letters': s.ascii_lowercase[:3]}\n",
    "type hints": "from typing import Any, Optional\n"
                  "def f(state: dict[str, Any], limit: Optional[int] = None) -> dict[str, Any]:\n"
                  "    return {'limit': limit}\n",
    "exception subclass and chaining": "class NotFound(ValueError):\n    pass\n"
                                       "def f(state, key):\n    try:\n        return state[key]\n"
                                       "    except KeyError as exc:\n        raise NotFound(key) from exc\n",
    "match on a mapping": "def f(state, record):\n    match record:\n"
                          "        case {'status': 'active', 'id': str(rid)}:\n            return rid\n"
                          "        case _:\n            raise ValueError('inactive')\n",
    "a builtin that matches itself": "def f(state, value):\n    match value:\n"
                                     "        case str(text):\n            return text\n"
                                     "        case int(n) | float(n):\n            return str(n)\n"
                                     "        case _:\n            raise ValueError('bad value')\n",
    "private helper functions": "def _record(state, rid):\n    return state['items'][rid]\n"
                                "def f(state, rid):\n    return dict(_record(state, rid))\n",
}


@pytest.mark.parametrize("case", list(BYPASSES))
def test_each_bypass_is_rejected_by_its_rule(case: str) -> None:
    source, reason = BYPASSES[case]
    problems = inspect_source(source, ["f"])
    assert problems and all(p.startswith("line ") for p in problems), problems
    assert any(reason in p for p in problems), problems


@pytest.mark.parametrize("case", list(UNPARSABLE))
def test_code_that_cannot_be_parsed_is_rejected_not_raised(case: str) -> None:
    problems = inspect_source(UNPARSABLE[case], ["f"])
    assert problems and all(p.startswith("line ") for p in problems), problems


def test_a_bypass_inside_real_generated_code_fails_the_bundle() -> None:
    travel = builtin_bundle("travel")
    source, _ = BYPASSES["module aliased to a variable"]
    hostile = travel.model_copy(update={"implementation": travel.implementation + "\n\n" + source})
    result = check_code(hostile)
    assert not result.passed and result.detail.startswith("line "), result.detail


def test_there_are_twelve_builtin_domains_to_check() -> None:
    assert len(DOMAINS) == 12


@pytest.mark.parametrize("domain", list(DOMAINS))
def test_builtin_generated_code_passes(domain: str) -> None:
    result = check_code(builtin_bundle(domain))
    assert result.passed, result.detail


@pytest.mark.parametrize("case", list(LEGITIMATE))
def test_legitimate_handler_idioms_pass(case: str) -> None:
    assert inspect_source(LEGITIMATE[case], ["f"]) == []


def test_a_module_offers_its_public_api_without_modules_or_denied_helpers() -> None:
    assert {"Any", "Optional", "cast"} <= module_members("typing")
    assert {"sys", "get_type_hints", "ForwardRef", "NamedTuple"}.isdisjoint(module_members("typing"))
    assert "namedtuple" not in module_members("collections") and "Counter" in module_members("collections")
    assert {"decoder", "encoder", "scanner", "codecs"}.isdisjoint(module_members("json"))
    assert "floor" in module_members("math")
    assert not any(name.startswith("_") for name in module_members("functools"))
