"""Database back ends of the project (the embedded SQLite default's writer queue)."""
