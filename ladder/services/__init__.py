"""Every write of the ladder goes through a service here (HackSoft style)."""
