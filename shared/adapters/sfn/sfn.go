// Package sfn builds the SDK's Step Functions client for the dev runtime
// and the tests (the functions make their few Step Functions calls signed
// by hand, shared/adapters/sfntoken, and link no SDK client), with the
// endpoint the environment gives (AWS_ENDPOINT_URL_SFN or
// AWS_ENDPOINT_URL), so the same code reaches AWS, LocalStack or the local
// runtime (sfnlocal) without a change.
package sfn

import (
	"context"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	sfnapi "github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// NewClient builds the client from cfg (config.LoadDefaultConfig reads the
// endpoint variables into BaseEndpoint). Against AWS nothing is changed.
// With a custom endpoint the "sync-" host prefix is turned off: the SDK
// sends StartSyncExecution to sync-<host>, which for AWS is the sync data
// plane but for http://127.0.0.1:PORT is a name that does not resolve.
func NewClient(cfg aws.Config, optFns ...func(*sfnapi.Options)) *sfnapi.Client {
	// Last, so that an endpoint set by optFns counts too.
	opts := append(slices.Clone(optFns), func(o *sfnapi.Options) {
		if o.BaseEndpoint != nil {
			o.APIOptions = append(o.APIOptions, disableHostPrefix)
		}
	})
	return sfnapi.NewFromConfig(cfg, opts...)
}

func disableHostPrefix(s *middleware.Stack) error {
	return s.Initialize.Add(middleware.InitializeMiddlewareFunc("SwitchboardNoHostPrefix",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			return next.HandleInitialize(smithyhttp.DisableEndpointHostPrefix(ctx, true), in)
		}), middleware.Before)
}
