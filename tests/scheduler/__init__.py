"""Tests for fastsched.scheduler."""
