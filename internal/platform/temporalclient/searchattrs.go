// The Wds* search attributes: registering them on a namespace, and starting workflows without the
// optional ones where a namespace lacks them.

package temporalclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/grpc"

	"wds/workflows/contract"
)

// SearchAttributeAdmin is the part of Temporal's operator service that lists and adds search
// attributes (client.Client's OperatorService()).
type SearchAttributeAdmin interface {
	ListSearchAttributes(ctx context.Context, in *operatorservice.ListSearchAttributesRequest, opts ...grpc.CallOption) (*operatorservice.ListSearchAttributesResponse, error)
	AddSearchAttributes(ctx context.Context, in *operatorservice.AddSearchAttributesRequest, opts ...grpc.CallOption) (*operatorservice.AddSearchAttributesResponse, error)
}

// EnsureSearchAttributes adds the custom search attributes of docs/webhooks.md that namespace lacks,
// so `wds worker` against a fresh server, or one set up by an older wds, needs no manual step. Where
// the server refuses (Temporal Cloud, a user without the right) and only optional attributes are
// missing, it logs the commands an administrator runs and returns nil: deliveries start without
// them. Missing required ones are an error: no delivery could start.
func EnsureSearchAttributes(ctx context.Context, ops SearchAttributeAdmin, namespace string, log logrus.FieldLogger) error {
	have, err := ops.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list search attributes: %w", err)
	}
	var missing []temporal.SearchAttributeKey
	for _, k := range contract.SearchAttributeKeys() {
		if _, ok := have.GetCustomAttributes()[k.GetName()]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	add := map[string]enumspb.IndexedValueType{}
	for _, k := range missing {
		add[k.GetName()] = enumspb.IndexedValueType(k.GetValueType())
	}
	_, err = ops.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{Namespace: namespace, SearchAttributes: add})
	if err == nil {
		return nil
	}
	commands := CreateCommands(namespace, missing)
	if refused(err) && allOptional(missing) {
		log.WithError(err).Warnf("Temporal refused to add search attributes %s; deliveries go on without them. "+
			"An administrator of namespace %s adds them with:\n%s", names(missing), namespace, commands)
		return nil
	}
	return fmt.Errorf("add search attributes %s (an administrator adds them with: %s): %w", names(missing),
		strings.ReplaceAll(commands, "\n", "; "), err)
}

// CreateCommands are the Temporal CLI commands that add the given attributes, one a line.
func CreateCommands(namespace string, keys []temporal.SearchAttributeKey) string {
	lines := make([]string, len(keys))
	for i, k := range keys {
		lines[i] = fmt.Sprintf("temporal operator search-attribute create --namespace %s --name %s --type %s",
			namespace, k.GetName(), cliType(k))
	}
	return strings.Join(lines, "\n")
}

// cliType is the Temporal CLI's name of an attribute's type (INDEXED_VALUE_TYPE_KEYWORD_LIST is
// KeywordList).
func cliType(k temporal.SearchAttributeKey) string {
	words := strings.Split(strings.TrimPrefix(k.GetValueType().String(), "INDEXED_VALUE_TYPE_"), "_")
	for i, w := range words {
		words[i] = w[:1] + strings.ToLower(w[1:])
	}
	return strings.Join(words, "")
}

// refused is the server saying the caller may not add attributes, rather than being unreachable.
func refused(err error) bool {
	var denied *serviceerror.PermissionDenied
	var unimplemented *serviceerror.Unimplemented
	return errors.As(err, &denied) || errors.As(err, &unimplemented)
}

func allOptional(keys []temporal.SearchAttributeKey) bool {
	for _, k := range keys {
		if !isOptional(k.GetName()) {
			return false
		}
	}
	return true
}

func isOptional(name string) bool {
	for _, o := range contract.OptionalSearchAttributeKeys() {
		if o.GetName() == name {
			return true
		}
	}
	return false
}

func names(keys []temporal.SearchAttributeKey) string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.GetName()
	}
	return strings.Join(out, ", ")
}

// recheckMissing is how long a process starts workflows without the optional attributes after the
// namespace refused one, before it tries them again (an administrator may have added them).
const recheckMissing = 10 * time.Minute

// OptionalAttrs remembers, per process, that the namespace lacks an optional attribute.
type OptionalAttrs struct {
	mu           sync.Mutex
	missingUntil time.Time
}

func (o *OptionalAttrs) Usable() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return time.Now().After(o.missingUntil)
}

// Missing records the refusal err and says what to run.
func (o *OptionalAttrs) Missing(log logrus.FieldLogger, namespace string, err error) {
	o.mu.Lock()
	o.missingUntil = time.Now().Add(recheckMissing)
	o.mu.Unlock()
	log.WithError(err).Warnf("the Temporal namespace lacks search attributes %s; workflows start without them. "+
		"An administrator adds them with:\n%s", names(contract.OptionalSearchAttributeKeys()),
		CreateCommands(namespace, contract.OptionalSearchAttributeKeys()))
}

// MissingAttribute is a start refused because it names an optional attribute the namespace lacks.
func MissingAttribute(err error) bool {
	var invalid *serviceerror.InvalidArgument
	if !errors.As(err, &invalid) {
		return false
	}
	for _, k := range contract.OptionalSearchAttributeKeys() {
		if strings.Contains(invalid.Message, k.GetName()) {
			return true
		}
	}
	return false
}
