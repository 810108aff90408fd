# How a native operator is declared and bound. The declarations themselves, one per operator,
# are the catalog in _native_ops.pyx; docs/dev/adding-a-native-operator.md explains the parts.
#
# Parameters travel by name: a declaration lists them (name, range, default, doc) in the order
# of the fields of the operator's C parameter struct, and the adapter reads those named fields.
# Binding turns values given in that order (Operator.params) into the struct, and the common
# settings of every repair operator (REPAIR_COMMON) into fields of NativeOp.
import math
from dataclasses import dataclass

from glns.exceptions import OperatorError

PROBLEMS = frozenset({"tsp", "cvrp", "ovrp", "vrptw"})
#: what a destroy operator promises about how many nodes it removes, for k in [1, m] (m: the
#: routable nodes): "k" exactly k; "at most k"; "at least k"; "about k" between 1 and m.
REMOVES = ("k", "at most k", "at least k", "about k")


@dataclass(frozen=True)
class Param:
    """One numeric parameter of a native operator, valid in [low, high]."""

    name: str
    default: float
    low: float
    high: float = math.inf
    integer: bool = False
    doc: str = ""

    def check(self, operator: str, value: float) -> float:
        """`value` as a float; OperatorError when it is not a number in range."""
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise OperatorError(f"{operator}: {self.name} must be a number, got {value!r}") from None
        if not (self.low <= value <= self.high):
            raise OperatorError(f"{operator}: {self.name} must be in [{self.low}, {self.high}], got {value}")
        if self.integer and value != int(value):
            raise OperatorError(f"{operator}: {self.name} must be an integer, got {value}")
        return value


#: Settings every repair operator takes after its own parameters; each is a field of NativeOp.
REPAIR_COMMON = (
    Param("local_search", 0, 0, 4, integer=True,
          doc="1: end with the native local search (2-opt/or-opt for TSP; relocate, swap, "
              "2-opt, 2-opt* for VRP) started from the reinserted nodes; 2: as 1, and on a TSP "
              "also sequential 3-opt moves; 3: as 2, and on VRP routes also SWAP*; 4: as 3, "
              "and on VRP routes also strings of 2-3 customers relocated; 0: off (paper preset)"),
)


def check_layout(str name, fields, tuple params) -> None:
    """TypeError unless the C parameter struct `fields` (a dict of field -> value, as Cython
    converts a struct) has one double per declared parameter, named and ordered alike."""
    names = tuple(p.name for p in params)
    if tuple(fields) != names:
        raise TypeError(f"native operator {name!r}: its parameter struct has fields "
                        f"{tuple(fields)}, its declaration parameters {names} (same names, same order)")
    if not all(type(v) is float for v in fields.values()):
        raise TypeError(f"native operator {name!r}: every field of its parameter struct must be a double")
    if len(names) > MAX_PARAMS:
        raise TypeError(f"native operator {name!r}: at most {MAX_PARAMS} parameters, got {len(names)}")


cdef class Declaration:
    """What a native operator is: its name, destroy or repair, the problems it handles, its
    parameters (own ones in `params`, the settings every operator of its kind takes in
    `common`) and, for a destroy operator, how many nodes it removes (`removes`, see REMOVES).

    Made only by the catalog (glns._core._native_ops); read it through
    ``glns.operators.NATIVE_OPERATORS``.
    """

    def __init__(self):
        raise TypeError("native operators are declared in glns._core._native_ops")

    @property
    def all_params(self) -> tuple:
        """Every parameter it takes by name, in the order of Operator.params."""
        return self.params + self.common

    def values(self, given) -> tuple:
        """The parameter values: defaults overridden by the mapping `given`, checked."""
        known = {p.name: p for p in self.all_params}
        for key in given:
            if key not in known:
                names = sorted(known) or "none"
                raise OperatorError(f"native operator {self.name!r} has no parameter {key!r} "
                                    f"(parameters: {names})")
        return tuple(p.check(self.name, given.get(p.name, p.default)) for p in self.all_params)

    def bind(self, values) -> NativeOperator:
        """The operator ready for the loop, from values in the order of `all_params` (the
        common settings may be left out: they take their defaults). Values are not range
        checked here (``values`` does that), so tests can hand the core raw ones."""
        cdef NativeOperator bound = NativeOperator.__new__(NativeOperator)
        values = tuple(values)
        if len(values) not in (len(self.params), len(self.all_params)):
            raise ValueError(f"native operator {self.name!r} takes {len(self.params)} values "
                             f"{tuple(p.name for p in self.params)}, then optionally "
                             f"{tuple(p.name for p in self.common)}; got {len(values)}")
        named = dict(zip((p.name for p in self.all_params), (float(v) for v in values)))
        for p in self.common:
            named.setdefault(p.name, float(p.default))
        bound.declaration = self
        bound.values = named
        bound.op.destroy = self.adapter.destroy
        bound.op.repair = self.adapter.repair
        for i, p in enumerate(self.params):
            bound.op.params[i] = named[p.name]
        for i in range(len(self.params), MAX_PARAMS):
            bound.op.params[i] = 0.0
        bound.op.local_search = int(named["local_search"]) if self.kind == "repair" else 0
        return bound

    def __repr__(self) -> str:
        params = ", ".join(f"{p.name}={p.default:g}" for p in self.all_params)
        return f"<native {self.kind} {self.name}({params})>"


cdef class NativeOperator:
    """A native operator bound to parameter values: what the loop calls (glns._core._alns)."""

    def __init__(self):
        raise TypeError("bind a native operator with Declaration.bind")

    @property
    def name(self) -> str:
        return self.declaration.name

    @property
    def kind(self) -> str:
        return self.declaration.kind

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v:g}" for k, v in self.values.items())
        return f"<bound native {self.kind} {self.name}({params})>"


cdef class Adapter:
    """The function pointer of a native operator's adapter (made in C only)."""

    def __init__(self):
        raise TypeError("adapters are made by destroy_adapter/repair_adapter in the core")


cdef Adapter destroy_adapter(DestroyFn fn):
    cdef Adapter a = Adapter.__new__(Adapter)
    a.destroy = fn
    return a


cdef Adapter repair_adapter(RepairFn fn):
    cdef Adapter a = Adapter.__new__(Adapter)
    a.repair = fn
    return a


def declare_destroy(str name, Adapter adapter not None, fields, *, tuple params=(), str doc,
                    frozenset problems=PROBLEMS, str removes="k") -> Declaration:
    """A destroy operator: `adapter` from destroy_adapter, `fields` its parameter struct
    (None when it has no parameters), `removes` one of REMOVES."""
    if adapter.destroy == NULL:
        raise TypeError(f"native operator {name!r}: declared as destroy with a repair adapter")
    if removes not in REMOVES:
        raise ValueError(f"native operator {name!r}: removes must be one of {REMOVES}, got {removes!r}")
    cdef Declaration d = _declare(name, "destroy", adapter, fields, params, doc, problems)
    d.removes = removes
    return d


def declare_repair(str name, Adapter adapter not None, fields, *, tuple params=(), str doc,
                   frozenset problems=PROBLEMS) -> Declaration:
    """A repair operator: `adapter` from repair_adapter, `fields` its parameter struct (None
    when it has no parameters). It takes REPAIR_COMMON after its own parameters."""
    if adapter.repair == NULL:
        raise TypeError(f"native operator {name!r}: declared as repair with a destroy adapter")
    return _declare(name, "repair", adapter, fields, params, doc, problems)


cdef Declaration _declare(str name, str kind, Adapter adapter, object fields, tuple params,
                          str doc, frozenset problems):
    if not problems or not problems <= PROBLEMS:
        raise ValueError(f"native operator {name!r}: problems must be a non-empty subset of "
                         f"{sorted(PROBLEMS)}, got {sorted(problems)}")
    check_layout(name, fields if fields is not None else {}, params)
    cdef Declaration d = Declaration.__new__(Declaration)
    d.adapter = adapter
    d.name = name
    d.kind = kind
    d.problems = problems
    d.params = params
    d.common = REPAIR_COMMON if kind == "repair" else ()
    d.doc = doc
    d.removes = None
    return d
