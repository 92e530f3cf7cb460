"""Windows over streams (DESIGN.md section 1, RSEP-QL Definition 3), as the SECRET model's
separate objects: a window's scope and content (:mod:`.scope`), when it reports
(:mod:`.report`, with the tick), the buffer that turns a stream into window contents and
their changes (:mod:`.buffer`), and the relation-to-stream operators (:mod:`.r2s`).
Time comes only from the stream: nothing here reads a clock."""
from chronolog.window.buffer import Change, WindowBuffer
from chronolog.window.r2s import R2S, DSTREAM, ISTREAM, RSTREAM, relation_to_stream
from chronolog.window.report import (ContentChange, EvaluateAt, NonEmptyContent, Periodic, ReportPolicy, Tick,
                                     WindowClose)
from chronolog.window.scope import (FOREVER, Bounds, IntervalWindow, LandmarkWindow, Scope, SlidingWindow,
                                    TupleWindow, Window)

__all__ = ["Bounds", "Change", "ContentChange", "DSTREAM", "EvaluateAt", "FOREVER", "ISTREAM", "IntervalWindow",
           "LandmarkWindow", "NonEmptyContent", "Periodic", "R2S", "RSTREAM", "ReportPolicy", "Scope",
           "SlidingWindow", "Tick", "TupleWindow", "Window", "WindowBuffer", "WindowClose", "relation_to_stream"]
