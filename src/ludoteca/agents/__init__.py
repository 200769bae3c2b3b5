"""AI players: random, per-game heuristics, Monte-Carlo tree search."""

from ludoteca.agents.base import Agent, RandomAgent, agent_names, make_agent, parse_spec, register

__all__ = ["Agent", "RandomAgent", "agent_names", "make_agent", "parse_spec", "register"]
