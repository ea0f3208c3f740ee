#!/usr/bin/env python3
"""Command-line entry point of the reporter."""

from util import load


def main() -> None:
    print(load("data.csv"))


if __name__ == "__main__":
    main()
