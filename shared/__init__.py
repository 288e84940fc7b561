"""The product's package, layered one way: app -> graph -> services -> ports <- adapters."""
