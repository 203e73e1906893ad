// Command pulumi-resource-kubernetes serves the provider as the provider's own main package does. That
// package embeds a schema its release build generates (not in the module download): the engine build
// writes schema-embed.json and terraform-mapping-embed.json beside this file from the module's sources.
package main

import (
	_ "embed"

	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/provider"
	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version"
)

//go:embed schema-embed.json
var pulumiSchema []byte

//go:embed terraform-mapping-embed.json
var terraformMapping []byte

func main() {
	provider.Serve("kubernetes", version.Version, pulumiSchema, terraformMapping)
}
