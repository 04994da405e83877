"""Human review: cases, their events and business calendars (see issue 8)."""
