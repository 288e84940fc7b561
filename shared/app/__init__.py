"""What the functions call: one application service per request kind.

Turns and their stream, resumes and the chat poll, fact extraction, agent job delivery and
control, and the settings API (``settings/``). These run the turn graph and the domain
services below it; nothing below imports them. Each takes the composition root (``Deps``).
"""
