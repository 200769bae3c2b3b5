"""Playing in the terminal: coloured boards and the hot-seat / against-the-AI loop."""
