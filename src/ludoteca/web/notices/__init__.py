"""Notices to players: "your turn", "game over", reminders, by e-mail, Web Push and webhook."""
