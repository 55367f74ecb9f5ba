"""Operators: logical nodes -> DataFrame transformations and sink actions."""
