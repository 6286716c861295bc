"""Crash consistency and concurrency: kill -9 campaigns and two servers on one project (issue 15)."""
