"""The registration API of a site, for code that cannot use the decorator."""

from django_mcp import site


def word_count(text: str) -> str:
    """Count the words in a text."""
    return f"{len(text.split())} words"


site.register(word_count)  # like admin.site.register: the same as a bare @django_mcp.tool


# Say a third-party app's mcp.py registered this tool...
def search(query: str) -> str:
    """Search the catalogue."""
    return "results from the app"


site.register(search)


# ...and your project replaces it, as it would re-register a ModelAdmin:
def better_search(query: str) -> str:
    """Search the catalogue, titles and authors."""
    return "better results"


site.unregister("search")  # by name, or by function: site.unregister(search)
site.tool(name="search", read_only=True)(better_search)
