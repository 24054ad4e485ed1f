"""Oriole: LLM agents navigating 2D mazes as reproducible experiments on AWS Step Functions."""

__version__ = "0.1.0"  # the one version of the project (pyproject.toml reads it; deployments record it)
