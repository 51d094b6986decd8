// Fixture: the header the forbidden include names. Never compiled.
