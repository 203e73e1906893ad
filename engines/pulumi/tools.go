//go:build tools

// The command this module builds; the import keeps it in go.mod and go.sum.
package engines

import _ "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"
