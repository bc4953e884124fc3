"""Tests for fastsched.config."""
