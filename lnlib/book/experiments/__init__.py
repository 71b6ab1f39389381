"""One module per chapter, named by the chapter's slug: the computations whose numbers its prose
quotes."""
