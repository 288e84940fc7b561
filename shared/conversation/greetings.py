"""The deterministic greeting rule (the greeting agent's): certain, so no model call.

A message that is only a greeting or thanks skips the model and all memory work, and is
answered in the language it was written in.
"""

from __future__ import annotations

import re

_GREETING = re.compile(
    r"^\s*(hi|hello|hey|hallo|hoi|gr[üu]ezi|servus|bonjour|salut|ciao|hola|good (morning|"
    r"afternoon|evening)|guten (morgen|tag|abend)|thanks?( you)?( so much)?|thx|danke"
    r"( sch[öo]n)?|merci( beaucoup)?|grazie( mille)?|gracias)\s*[!.?,:)]*\s*$",
    re.IGNORECASE,
)
_LANGUAGE = (
    (re.compile(r"hallo|hoi|gr[üu]ezi|servus|guten|danke", re.IGNORECASE), "de"),
    (re.compile(r"bonjour|salut|merci", re.IGNORECASE), "fr"),
    (re.compile(r"ciao|grazie", re.IGNORECASE), "it"),
    (re.compile(r"hola|gracias", re.IGNORECASE), "es"),
)
_THANKS = re.compile(r"thank|thx|danke|merci|grazie|gracias", re.IGNORECASE)
_REPLIES = {
    ("en", False): "Hello! How can I help you today?",
    ("en", True): "You're welcome! Anything else I can do for you?",
    ("de", False): "Hallo! Wie kann ich helfen?",
    ("de", True): "Gern geschehen! Kann ich sonst noch etwas tun?",
    ("fr", False): "Bonjour ! Comment puis-je vous aider ?",
    ("fr", True): "Avec plaisir ! Puis-je faire autre chose pour vous ?",
    ("it", False): "Ciao! Come posso aiutarti?",
    ("it", True): "Prego! Posso fare altro per te?",
    ("es", False): "¡Hola! ¿En qué puedo ayudarte?",
    ("es", True): "¡De nada! ¿Algo más en lo que pueda ayudarte?",
}


def is_plain_greeting(text: str) -> bool:
    return bool(_GREETING.match(text))


def greeting_language(text: str) -> str:
    return next((code for pattern, code in _LANGUAGE if pattern.search(text)), "en")


def greeting_reply(text: str) -> str:
    return _REPLIES[(greeting_language(text), bool(_THANKS.search(text)))]
