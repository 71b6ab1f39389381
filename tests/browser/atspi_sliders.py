"""Print, as JSON, every slider in the web documents of the AT-SPI desktop: its id, name and value
text.

Run by Debian's own ``/usr/bin/python3`` (packages python3-gi and gir1.2-atspi-2.0), not by the
project's venv, from tests/browser/test_platform_accessibility.py, on the private accessibility bus
that test starts. This is the tree a Linux screen reader (Orca) reads; Chromium puts a slider's
aria-valuetext among the object's attributes as ``valuetext``.
"""

import json

import gi

gi.require_version("Atspi", "2.0")
from gi.repository import Atspi  # noqa: E402


def web_documents(node, depth=0):
    """The web documents under `node` (an application, a window, ...), not looking inside them."""
    if depth > 12:
        return
    if node.get_role() == Atspi.Role.DOCUMENT_WEB:
        yield node
        return
    for i in range(node.get_child_count()):
        child = node.get_child_at_index(i)
        if child is not None:
            yield from web_documents(child, depth + 1)


def sliders(document):
    """Every slider in `document`, found by AT-SPI's Collection interface in one call."""
    rule = Atspi.MatchRule.new(
        Atspi.StateSet.new([]),
        Atspi.CollectionMatchType.ALL,
        {},
        Atspi.CollectionMatchType.ALL,
        [Atspi.Role.SLIDER],
        Atspi.CollectionMatchType.ANY,
        [],
        Atspi.CollectionMatchType.ALL,
        False,
    )
    collection = document.get_collection_iface()
    return collection.get_matches(rule, Atspi.CollectionSortOrder.CANONICAL, 0, True)


def main():
    desktop = Atspi.get_desktop(0)
    found = []
    for i in range(desktop.get_child_count()):
        application = desktop.get_child_at_index(i)
        if application is None:
            continue
        for document in web_documents(application):
            for slider in sliders(document):
                attributes = slider.get_attributes() or {}
                found.append(
                    {
                        "id": attributes.get("id", ""),
                        "name": slider.get_name(),
                        "valuetext": attributes.get("valuetext"),
                    }
                )
    print(json.dumps(found, ensure_ascii=False))


if __name__ == "__main__":
    main()
