"""Which of a site's lookups are code of its own, found on its class or on the site.

The tools guide lets a site override ``get_tools``/``get_tool`` (and the prompt and
resource lookups) to decide what each caller sees, which may include declarations built
per caller that are not in the registry. Where a lookup is the site's own, the registry
is not the one source of what it serves, so admission, scopes and capabilities ask the
lookup. Overriding one in a subclass is the usual way; replacing one on a site
(``site.get_tools = f``), as a test or a project's ``AppConfig.ready`` may, is the same
decision and is found the same way (:func:`replaced_on`), not silently missed.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

#: Each lookup and the kind of declaration it serves ("tools", "prompts", "resources").
LOOKUP_KINDS: Final = {
    "get_tool": "tools",
    "get_tools": "tools",
    "get_prompt": "prompts",
    "get_prompts": "prompts",
    "find_resource": "resources",
    "get_resources": "resources",
    "get_resource_templates": "resources",
}
#: The lookups that serve a request, and so may serve what the registry does not hold:
#: ``find_resource`` finds templates through ``get_resource_templates``; the other lists
#: only list (an override ordering or filtering them serves nothing new).
SERVING: Final = {
    "get_tool": "tools",
    "get_prompt": "prompts",
    "find_resource": "resources",
    "get_resource_templates": "resources",
}
#: The methods a subclass may override to decide what each caller sees (the tools guide).
CALLER_LOOKUPS: Final = ("has_permission", *LOOKUP_KINDS)
#: What makes a site decide per caller: a lookup of its own, or its own
#: ``varies_by_caller``, which says its lists differ per caller for reasons of its own.
DECIDING: Final = frozenset((*CALLER_LOOKUPS, "varies_by_caller"))


def own_code(cls: type, base: type, names: frozenset[str] | tuple[str, ...]) -> frozenset[str]:
    """The methods of ``names`` that ``cls`` does not inherit unchanged from ``base``."""
    return frozenset(name for name in names if getattr(cls, name) is not getattr(base, name))


def own_kinds(cls: type, base: type) -> frozenset[str]:
    """The kinds of declaration (``"tools"``...) that ``cls`` serves through a lookup of
    its own (:data:`SERVING`), not inherited unchanged from ``base``."""
    return frozenset(SERVING[name] for name in own_code(cls, base, tuple(SERVING)))


def replaced_on(site: Any, name: str) -> None:
    """Record that ``name`` (one of :data:`DECIDING`) was replaced on ``site`` itself: as
    for a subclass overriding it, the site decides per caller, and a replaced lookup
    serves its kind of declaration. A site that means otherwise sets
    ``decides_per_caller`` on itself afterwards. Derived state (capabilities) is
    recomputed, and listen streams hear that the lists may have changed."""
    object.__setattr__(site, "decides_per_caller", True)
    if name in SERVING:
        object.__setattr__(site, "own_lookups", site.own_lookups | {SERVING[name]})
    if "generation" in site.__dict__:  # not before the site's own __init__ has run
        site.registry_changed(LOOKUP_KINDS.get(name))


def derived(site: Any) -> None:
    """Set what the site's class says, and what is replaced on the site itself (in its
    ``__dict__``), onto the site: as it is made (a subclass's ``__init__`` may replace a
    lookup before calling ``super().__init__()``) and when a replacement is removed
    (``del site.get_tool``, or ``mock.patch.object`` restoring it), after which the class
    alone decides again."""
    cls = type(site)
    replaced = [name for name in DECIDING if name in site.__dict__]
    kinds = frozenset(SERVING[name] for name in replaced if name in SERVING)
    object.__setattr__(site, "decides_per_caller", cls.decides_per_caller or bool(replaced))
    object.__setattr__(site, "own_lookups", cls.own_lookups | kinds)


class LookupOverrides:
    """What :class:`~django_mcp.sites.MCPSite` knows of its own overrides: a mixin, so
    the site's module keeps to registering and looking up."""

    #: Whether the site decides what a caller sees in code of its own: an overridden
    #: ``has_permission``, lookup (:data:`CALLER_LOOKUPS`) or ``varies_by_caller`` may
    #: read the caller, so its lists are private and its declarations are looked up with
    #: the caller known. A class that sets it itself is taken at its word (and its
    #: subclasses, but for new overrides); one replaced on a site counts too.
    decides_per_caller: ClassVar[bool] = False
    #: The kinds of declaration ("tools", "prompts", "resources") served by a lookup of
    #: the site's own (:data:`SERVING`), which may serve what the registry does not hold:
    #: for those the lookups, not the registry, say what exists (admission, scopes,
    #: capabilities, tasks).
    own_lookups: ClassVar[frozenset[str]] = frozenset()
    #: The class's own :data:`DECIDING` methods when it was defined, for check W018.
    _defined_with: ClassVar[dict[str, Any]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._defined_with = {name: cls.__dict__.get(name) for name in DECIDING}
        # The class that defines the lookups (MCPSite): what a subclass's own code differs from.
        # A mixin after it in the MRO may define some lookups too: never reached, not it.
        sites = (b for b in reversed(cls.__mro__) if issubclass(b, LookupOverrides))
        defaults = next(b for b in sites if "get_tool" in b.__dict__)
        if defaults is cls:
            return
        cls.own_lookups = own_kinds(cls, defaults)
        if "decides_per_caller" not in cls.__dict__:  # the nearest class that says, or own code
            saying = (b for b in cls.__mro__ if "decides_per_caller" in b.__dict__)
            said = next((b for b in saying if issubclass(b, defaults)), defaults)
            own = own_code(cls, said, DECIDING)
            cls.decides_per_caller = bool(said.__dict__.get("decides_per_caller")) or bool(own)

    def __init__(self) -> None:
        """Copy what the class says onto the site: admission reads both on every
        ``tools/call``, and an instance's own attribute is read faster than a class's
        through it (the plain site's hot path, issue #10, is not to get slower)."""
        derived(self)

    def __setattr__(self, name: str, value: Any) -> None:
        """A lookup (or ``varies_by_caller``) replaced on the site itself is code of its
        own, as an override in a subclass is: unseen, the site went on answering as if it
        decided nothing per caller (public lists, lookups without the caller)."""
        super().__setattr__(name, value)
        if name in DECIDING:
            replaced_on(self, name)

    def __delattr__(self, name: str) -> None:
        """A replacement removed from the site: its class's own lookup decides again."""
        super().__delattr__(name)
        if name in DECIDING:
            derived(self)
            if "generation" in self.__dict__:
                self.registry_changed(LOOKUP_KINDS.get(name))  # type: ignore[attr-defined]


def replaced_on_class(cls: type) -> list[str]:
    """The :data:`DECIDING` methods assigned to ``cls`` after it was defined
    (``MCPSite.get_tools = f``): read once, as the class was made, what they decide was
    not seen (check W018; the rule is to override in a subclass or replace on a site)."""
    defined: dict[str, Any] = cls.__dict__.get("_defined_with", {})
    if not defined:
        return []
    return sorted(name for name in DECIDING if cls.__dict__.get(name) is not defined[name])
