// Command infra is the Switchboard CDK app: `npx cdk synth` / `cdk deploy`
// run it (cdk.json: go run .). Everything it deploys comes from the catalogue
// in shared/platform/deploy.
//
// Settings, each as CDK context (-c key=value) or environment variable:
//
//	assetDir     / SWITCHBOARD_ASSET_DIR      function folders with bootstrap (default ../build/functions)
//	configFile   / SWITCHBOARD_CONFIG_FILE    config packaged as config.yaml next to each bootstrap (optional)
//	stackName    / SWITCHBOARD_STACK_NAME     CloudFormation stack name (default Switchboard)
//	secretPrefix / SWITCHBOARD_SECRET_PREFIX  start of the created secrets' names (default switchboard/);
//	                                          the names are fixed, so a second stack in the same account
//	                                          and region needs its own, e.g. switchboard/staging/
//
// The functions' log retention is instance.logRetentionDays of the config
// file (default 30 days).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/switchboard-dev/switchboard/shared/platform/deploy"
)

func main() {
	enableJSIIPackageCache()
	defer jsii.Close()

	app := awscdk.NewApp(nil)
	assetDir := setting(app, "assetDir", "SWITCHBOARD_ASSET_DIR", DefaultAssetDir)
	configFile := setting(app, "configFile", "SWITCHBOARD_CONFIG_FILE", "")
	stackName := setting(app, "stackName", "SWITCHBOARD_STACK_NAME", "Switchboard")
	secretPrefix := setting(app, "secretPrefix", "SWITCHBOARD_SECRET_PREFIX", deploy.SecretNamePrefix)

	// Fail before any construct exists, with a message instead of a jsii panic.
	if err := CheckAssets(assetDir); err != nil {
		fmt.Fprintln(os.Stderr, "switchboard infra:", err)
		os.Exit(1)
	}
	if err := deploy.CheckSecretPrefix(secretPrefix); err != nil {
		fmt.Fprintln(os.Stderr, "switchboard infra:", err)
		os.Exit(1)
	}
	if configFile != "" {
		if _, err := os.Stat(configFile); err != nil {
			abs, _ := filepath.Abs(configFile)
			fmt.Fprintf(os.Stderr, "switchboard infra: config file %s: %v (configFile / SWITCHBOARD_CONFIG_FILE is relative to infra/)\n", abs, err)
			os.Exit(1)
		}
	}

	retention, err := LogRetentionFromConfig(configFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "switchboard infra:", err)
		os.Exit(1)
	}

	NewSwitchboardStack(app, stackName, &SwitchboardStackProps{
		StackProps:       awscdk.StackProps{Env: env()},
		AssetDir:         assetDir,
		ConfigFile:       configFile,
		SecretPrefix:     secretPrefix,
		LogRetentionDays: retention,
	})
	app.Synth(nil)
}

// setting reads CDK context key, then environment variable name, then def.
func setting(app awscdk.App, key, name, def string) string {
	if v, ok := app.Node().TryGetContext(jsii.String(key)).(string); ok && v != "" {
		return v
	}
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// env pins account and region only when the CLI knows them, so synth stays
// environment-agnostic offline.
func env() *awscdk.Environment {
	account, region := os.Getenv("CDK_DEFAULT_ACCOUNT"), os.Getenv("CDK_DEFAULT_REGION")
	if account == "" || region == "" {
		return nil
	}
	return &awscdk.Environment{Account: &account, Region: &region}
}

// enableJSIIPackageCache lets the jsii kernel reuse the unpacked aws-cdk-lib
// (~210 MB under ~/.cache/aws/jsii) instead of extracting it on every run:
// measured 21 s -> 10 s per synth. It must be set before the first jsii call
// starts node; JSII_RUNTIME_PACKAGE_CACHE=disabled opts out.
func enableJSIIPackageCache() {
	if os.Getenv("JSII_RUNTIME_PACKAGE_CACHE") == "" {
		os.Setenv("JSII_RUNTIME_PACKAGE_CACHE", "enabled")
	}
}
