package ddb_test

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/switchboard-dev/switchboard/shared/adapters/dynamo/ddb"
)

// toSDK and fromSDK convert attribute values between this package and the
// SDK's types, for the tests that compare the two.
func toSDK(av ddb.AttributeValue) types.AttributeValue {
	switch v := av.(type) {
	case *ddb.AttributeValueMemberS:
		return &types.AttributeValueMemberS{Value: v.Value}
	case *ddb.AttributeValueMemberN:
		return &types.AttributeValueMemberN{Value: v.Value}
	case *ddb.AttributeValueMemberB:
		return &types.AttributeValueMemberB{Value: v.Value}
	case *ddb.AttributeValueMemberBOOL:
		return &types.AttributeValueMemberBOOL{Value: v.Value}
	case *ddb.AttributeValueMemberNULL:
		return &types.AttributeValueMemberNULL{Value: v.Value}
	case *ddb.AttributeValueMemberSS:
		return &types.AttributeValueMemberSS{Value: v.Value}
	case *ddb.AttributeValueMemberNS:
		return &types.AttributeValueMemberNS{Value: v.Value}
	case *ddb.AttributeValueMemberBS:
		return &types.AttributeValueMemberBS{Value: v.Value}
	case *ddb.AttributeValueMemberM:
		return &types.AttributeValueMemberM{Value: toSDKMap(v.Value)}
	case *ddb.AttributeValueMemberL:
		l := make([]types.AttributeValue, len(v.Value))
		for i, e := range v.Value {
			l[i] = toSDK(e)
		}
		return &types.AttributeValueMemberL{Value: l}
	}
	panic(fmt.Sprintf("toSDK: %T", av))
}

func toSDKMap(m map[string]ddb.AttributeValue) map[string]types.AttributeValue {
	if m == nil {
		return nil
	}
	out := make(map[string]types.AttributeValue, len(m))
	for k, v := range m {
		out[k] = toSDK(v)
	}
	return out
}

func fromSDK(av types.AttributeValue) ddb.AttributeValue {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return &ddb.AttributeValueMemberS{Value: v.Value}
	case *types.AttributeValueMemberN:
		return &ddb.AttributeValueMemberN{Value: v.Value}
	case *types.AttributeValueMemberB:
		return &ddb.AttributeValueMemberB{Value: v.Value}
	case *types.AttributeValueMemberBOOL:
		return &ddb.AttributeValueMemberBOOL{Value: v.Value}
	case *types.AttributeValueMemberNULL:
		return &ddb.AttributeValueMemberNULL{Value: v.Value}
	case *types.AttributeValueMemberSS:
		return &ddb.AttributeValueMemberSS{Value: v.Value}
	case *types.AttributeValueMemberNS:
		return &ddb.AttributeValueMemberNS{Value: v.Value}
	case *types.AttributeValueMemberBS:
		return &ddb.AttributeValueMemberBS{Value: v.Value}
	case *types.AttributeValueMemberM:
		return &ddb.AttributeValueMemberM{Value: fromSDKMap(v.Value)}
	case *types.AttributeValueMemberL:
		l := make([]ddb.AttributeValue, len(v.Value))
		for i, e := range v.Value {
			l[i] = fromSDK(e)
		}
		return &ddb.AttributeValueMemberL{Value: l}
	}
	panic(fmt.Sprintf("fromSDK: %T", av))
}

func fromSDKMap(m map[string]types.AttributeValue) map[string]ddb.AttributeValue {
	if m == nil {
		return nil
	}
	out := make(map[string]ddb.AttributeValue, len(m))
	for k, v := range m {
		out[k] = fromSDK(v)
	}
	return out
}

// show prints SDK attribute values readably.
func show(v any) string {
	var plain func(av types.AttributeValue) any
	plain = func(av types.AttributeValue) any {
		switch v := av.(type) {
		case *types.AttributeValueMemberM:
			m := map[string]any{}
			for k, e := range v.Value {
				m[k] = plain(e)
			}
			return map[string]any{"M": m}
		case *types.AttributeValueMemberL:
			l := []any{}
			for _, e := range v.Value {
				l = append(l, plain(e))
			}
			return map[string]any{"L": l}
		}
		return fmt.Sprintf("%T%+v", av, av)
	}
	switch v := v.(type) {
	case map[string]types.AttributeValue:
		return fmt.Sprint(plain(&types.AttributeValueMemberM{Value: v}))
	case types.AttributeValue:
		return fmt.Sprint(plain(v))
	}
	return fmt.Sprint(v)
}
