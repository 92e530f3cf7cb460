"""LARS (Laser's programs): :mod:`.syntax` parses ``.lars`` files, :mod:`.check` checks them."""
