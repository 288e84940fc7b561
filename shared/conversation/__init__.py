"""Plain language rules with no stores and no model: phrases in the user's language, the
greeting rule, how a short answer picks an option, and the one text fold for names.

A leaf: it imports only ``shared.models``, so the graph, the domain services and the agents
all take their wording from here.
"""
