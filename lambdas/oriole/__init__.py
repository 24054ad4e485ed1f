"""Oriole: LLM agents navigating 2D mazes as reproducible experiments on AWS Step Functions."""
