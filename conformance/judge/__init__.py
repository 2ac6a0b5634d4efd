"""The judge: comparison, envelope tiers, diagnosis and the catalogue of misreadings."""
