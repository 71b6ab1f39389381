"""Back-references in the bibliography: after each entry, links to the pages that cite it.

sphinxcontrib-bibtex (2.6) records every citation and every place that cites it in its ``cite``
domain, but the ``{bibliography}`` directive renders entries only. When the bibliography page is
resolved (all pages have been read by then), this extension appends to each entry a line
"Cited in: <page>, <page>", each link leading to the first citation on that page, pages in reading
order (the table of contents).
"""

from __future__ import annotations

from docutils import nodes


def _reading_order(env) -> list[str]:
    """Every docname in the order the table of contents lists them, the root first."""
    order, pending = [], [env.config.root_doc]
    while pending:
        docname = pending.pop(0)
        if docname not in order:
            order.append(docname)
            pending[0:0] = env.toctree_includes.get(docname, [])
    return order


def _first_citing_places(env) -> dict[str, dict[str, str]]:
    """For each cited key: {docname: id of the first citation of it on that page}."""
    places: dict[str, dict[str, str]] = {}
    for ref in env.get_domain("cite").citation_refs:
        for target in ref.targets:
            places.setdefault(target.key, {}).setdefault(ref.docname, ref.citation_ref_id)
    return places


def _backref_paragraph(app, fromdoc: str, places: dict[str, str]) -> nodes.paragraph:
    order = _reading_order(app.env)
    rank = {docname: i for i, docname in enumerate(order)}
    paragraph = nodes.paragraph(classes=["bib-backrefs"])
    paragraph += nodes.Text("Cited in: ")
    for i, docname in enumerate(sorted(places, key=lambda d: rank.get(d, len(rank)))):
        if i:
            paragraph += nodes.Text(", ")
        uri = app.builder.get_relative_uri(fromdoc, docname) + "#" + places[docname]
        paragraph += nodes.reference(
            "", app.env.titles[docname].astext(), refuri=uri, internal=True
        )
    return paragraph


def add_backrefs(app, doctree, docname) -> None:
    if app.builder.format != "html":
        return
    domain = app.env.get_domain("cite")
    key_of_id = {citation.citation_id: citation.key for citation in domain.citations}
    places = _first_citing_places(app.env)
    for entry in doctree.findall(nodes.citation):
        keys = [key_of_id[i] for i in entry["ids"] if i in key_of_id]
        if keys and places.get(keys[0]):
            entry += _backref_paragraph(app, docname, places[keys[0]])


def setup(app):
    app.connect("doctree-resolved", add_backrefs)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
