"""Matching URIs against RFC 6570 templates: correct, and linear in the URI's length.

server/resources.mdx, "Resource Templates": templates follow RFC 6570. RFC 6570 defines
expansion; the reverse split here is fixed (every variable but the last ends at the first
character of what follows it), so matching never backtracks.
"""

from __future__ import annotations

import pytest

from django_mcp.protocol.uritemplate import InvalidTemplate, URITemplate, expand, normalised

#: Three reserved expansions: a backtracking matcher tries every split (cubic time).
REPO = "repo://{+owner}/{+name}/{+path}"


@pytest.mark.parametrize(
    ("template", "uri", "expected"),
    [
        (
            REPO,
            "repo://django/django/docs/index.txt",
            {"owner": "django", "name": "django", "path": "docs/index.txt"},
        ),
        ("paths://{+rest}", "paths://a/b%20c", {"rest": "a/b c"}),
        ("books://{isbn}", "books://978%2D0", {"isbn": "978-0"}),
        ("files://{+path}.txt", "files://a.b.txt", {"path": "a.b"}),
        ("x://{a}-{b}", "x://p-q-r", {"a": "p", "b": "q-r"}),
        ("x://{a}{/b}{.ext}", "x://root/name.json", {"a": "root", "b": "name", "ext": "json"}),
        ("x://{a}{;v}", "x://q;v=1", {"a": "q", "v": "1"}),
        ("x://page{#frag}", "x://page#top/more", {"frag": "top/more"}),
        ("search://books{?q,limit}", "search://books?q=dune&limit=3", {"q": "dune", "limit": "3"}),
    ],
)
def test_matches_and_decodes(template: str, uri: str, expected: dict[str, str]) -> None:
    """RFC 6570 section 3.2: each supported operator; values are percent-decoded."""
    assert URITemplate(template).match(uri) == expected


@pytest.mark.parametrize(
    ("template", "uri"),
    [
        (REPO, "repo://django/django"),  # a variable with no value
        (REPO, "repo://a/b/c?x"),  # "?" is never part of a path
        ("books://{isbn}", "books://a/b"),  # a simple value holds no "/"
        ("files://{+path}.txt", "files://a.md"),
        ("x://{a}-{b}", "x://pq"),
        ("books://{isbn}", "books://97%008"),  # a value that decodes to a NUL
        (REPO, "repo://a/%00/c"),
        ("search://books{?q,limit}", "search://books?q=%00"),
    ],
)
def test_refuses_what_does_not_match(template: str, uri: str) -> None:
    assert URITemplate(template).match(uri) is None


@pytest.mark.parametrize("template", ["stats://cpu%/{host}", "x://{a}/100%", "x://%4/{a}"])
def test_a_percent_that_starts_no_triplet_is_refused_when_declared(template: str) -> None:
    """RFC 6570, 2.1: a literal holds ``%`` only in a triplet. A URI with a stray ``%`` is
    refused by ``match`` (RFC 3986, 2.4), so such a template, which matched before,
    silently matched nothing; it now fails where it is declared."""
    with pytest.raises(InvalidTemplate, match="starts no percent-encoded triplet"):
        URITemplate(template)


@pytest.mark.parametrize("template", ["x://{a}{b}", "x://{+a}{b}", "x://{a}{+b}"])
def test_adjacent_expressions_are_refused_when_declared(template: str) -> None:
    """Nothing separates the two values, so no split is more right than another."""
    with pytest.raises(InvalidTemplate, match="cannot be told apart"):
        URITemplate(template)


@pytest.mark.timeout(5)
@pytest.mark.parametrize(
    "uri",
    [
        "repo://" + "a/" * 1500 + "?",  # 3,008 characters that almost match
        "repo://" + "a/" * 1500,
        "repo://" + "/" * 3000,
        "repo://" + "a" * 100_000 + "/b/" + "c/" * 50_000,
    ],
)
def test_pathological_uris_match_in_linear_time(uri: str) -> None:
    """The 3 KB URI that took 9.5 s (and stalled the worker) with a backtracking regex.
    The per-test timeout is the guard: a super-linear matcher cannot finish in it."""
    for _ in range(20):
        URITemplate(REPO).match(uri)


#: RFC 6570 section 3.2's example values.
VALUES = {
    "var": "value",
    "hello": "Hello World!",
    "path": "/foo/bar",
    "empty": "",
    "x": "1024",
    "y": "768",
    "half": "50%",
    "key": "AC/DC 100%",
}


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{var}", "value"),
        ("{hello}", "Hello%20World%21"),
        ("{half}", "50%25"),
        ("{+half}", "50%25"),
        ("{+path}/here", "/foo/bar/here"),
        ("{+hello}", "Hello%20World!"),
        ("{+key}", "AC/DC%20100%25"),
        ("{+encoded}", "a%20b%2Fc"),
        ("X{#path}", "X#/foo/bar"),
        ("X{.var}", "X.value"),
        ("{/var,x}/here", "/value/1024/here"),
        ("{;x,y,empty}", ";x=1024;y=768;empty"),
        ("{?x,y,empty}", "?x=1024&y=768&empty="),
        ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
        ("{undef}{?undef}", ""),
        ("books://{key}", "books://AC%2FDC%20100%25"),
        ("u://{u}", "u://%C3%A9t%C3%A9"),
    ],
)
def test_expands_as_rfc_6570_section_3_2(template: str, expected: str) -> None:
    """RFC 6570 section 3.2's examples, and a key with a slash, a space and a percent
    sign: the URI a resource is read at, which an announced change must name exactly."""
    values = {**VALUES, "encoded": "a%20b%2Fc", "u": "été"}
    assert expand(template, values) == expected


@pytest.mark.parametrize("key", ["AC/DC 100%", "a?b#c&d", "%2F", "été", " "])
def test_a_simple_expansion_matches_back_to_its_value(key: str) -> None:
    assert URITemplate("books://{isbn}").match(expand("books://{isbn}", {"isbn": key})) == {
        "isbn": key
    }


@pytest.mark.parametrize(
    ("uri", "normal"),
    [
        ("notes://admin", "notes://admin"),
        ("notes://%61dmin", "notes://admin"),
        ("notes://%41%7e%2D%2e%5F", "notes://A~-._"),  # every kind of unreserved character
        ("notes://a%2fb%c3%a9", "notes://a%2Fb%C3%A9"),  # others kept, hex made uppercase
        ("notes://100%", "notes://100%"),  # no triplet: left for the matcher to refuse
    ],
)
def test_normal_form_decodes_unreserved_characters_only(uri: str, normal: str) -> None:
    """server/resources.mdx: a resource is identified by a URI (RFC 3986). RFC 3986,
    6.2.2.1 and 6.2.2.2: percent-encoded unreserved characters are the characters
    themselves, and a triplet's hex digits are compared uppercase."""
    assert normalised(uri) == normal


def test_a_literal_matches_in_any_spelling() -> None:
    """server/resources.mdx; RFC 3986, 6.2.2.2: ``%6Eotes`` is ``notes``, in the template's
    literal as in a value."""
    assert URITemplate("x://notes/{id}").match("x://%6Eotes/%61") == {"id": "a"}


@pytest.mark.parametrize(
    "uri",
    [
        "books://%ff",  # not UTF-8 (was U+FFFD, as %fe was)
        "books://%C0%AF",  # an overlong "/"
        "books://%ED%A0%80",  # a surrogate
        "books://100%",  # a "%" that starts no triplet (was the value of 100%25 too)
        "books://%4",
        "search://books?q=%ff",  # a query value
        "search://books?q=50%",
    ],
)
def test_a_value_that_is_not_utf8_text_matches_nothing(uri: str) -> None:
    """server/resources.mdx: servers MUST validate resource URIs. A value is decoded as
    UTF-8 strictly: invalid bytes are refused, not replaced with U+FFFD, which made many
    URIs name one resource."""
    template = "search://books{?q,limit}" if uri.startswith("search") else "books://{isbn}"
    assert URITemplate(template).match(uri) is None


@pytest.mark.parametrize(
    ("uri", "path"),
    [
        ("files://a/b", "a/b"),
        ("files://a%2Fb", "a%2Fb"),
        ("files://a%2fb", "a%2Fb"),
        ("files://a%252Fb", "a%252Fb"),
        ("files://a%20b", "a b"),
        ("files://caf%C3%A9%3F%C3%A9", "café%3Fé"),
    ],
)
def test_a_reserved_expansion_keeps_reserved_triplets(uri, path):
    """RFC 6570 section 3.2.3 (reserved expansion passes a percent-encoded triplet through)
    and RFC 3986 section 2.2: ``a%2Fb`` and ``a/b`` are two URIs, so two values; other
    triplets decode as in a simple expansion (server/resources.mdx, "Resource Templates")."""
    assert URITemplate("files://{+path}").match(uri) == {"path": path}


def test_a_simple_expansion_decodes_every_triplet():
    """A simple ``{var}`` encodes reserved characters when it expands (RFC 6570 3.2.2), so
    reading one back decodes them: ``a%2Fb`` is the value ``a/b`` (``/`` itself is not
    in a simple value)."""
    assert URITemplate("notes://{slug}").match("notes://a%2Fb") == {"slug": "a/b"}
    assert URITemplate("notes://{slug}").match("notes://a/b") is None
