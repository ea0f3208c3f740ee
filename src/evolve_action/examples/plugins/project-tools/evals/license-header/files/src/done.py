# SPDX-FileCopyrightText: 2026 Acme Ltd
# SPDX-License-Identifier: MIT

"""Already carries its header."""
