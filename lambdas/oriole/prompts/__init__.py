"""Prompt texts shipped with the code; Parameter Store holds the copies experiments read."""
