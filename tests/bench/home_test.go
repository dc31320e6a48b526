// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package bench

import "github.com/agentotel/agentotel/internal/testhome"

// The tests never read the agents' folders of whoever runs them.
func init() { testhome.Sandbox() }
