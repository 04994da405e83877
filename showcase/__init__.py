"""Built on both apps: demo history, screenshots and the revision evaluation, which read audit's and
escalation's rows together (docs/ARCHITECTURE.md, "Dependencies between the parts")."""
