"""The policy group's controllers."""
