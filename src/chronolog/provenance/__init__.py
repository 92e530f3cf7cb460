"""Why an output holds (``chronolog run --provenance``, ``chronolog explain``): the facts
behind a query solution (:mod:`.solutions`), the origin of each fact (:mod:`.facts`), and
the JSON Lines records a run writes and ``explain`` reads (:mod:`.records`)."""
