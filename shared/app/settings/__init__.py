"""The settings API (``functions/memory``): the user's control over what is stored.

``api.SettingsApi`` routes each path to one of ``persons``, ``profile``, ``hitl`` and
``account``; answers to held facts go to ``shared.services.memory.pending``, which the turn
graph also calls.
"""
