# After the server is up: wait until the cluster reports SERVING, then create the namespace wds uses
# and the Wds* search attributes its workflows carry (docs/production.md), through the operator
# service. Each step is skipped when already done, so it runs on every start. docker-compose.yml's
# temporal-setup one-shot and the tests' cluster (internal/dev/temporalcluster) both run this file.
#
# TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE are read by the temporal CLI and by this script.
until temporal operator cluster health | grep -q SERVING; do sleep 1; done
temporal operator namespace describe -n "$TEMPORAL_NAMESPACE" >/dev/null 2>&1 ||
  temporal operator namespace create -n "$TEMPORAL_NAMESPACE" --retention 72h
# A namespace just created reaches the frontend's namespace cache a few seconds later; until then
# listing its search attributes says it is not found.
until temporal operator search-attribute list -n "$TEMPORAL_NAMESPACE" >/dev/null 2>&1; do sleep 1; done
attr() {
  temporal operator search-attribute list -n "$TEMPORAL_NAMESPACE" | grep -qw "$1" ||
    temporal operator search-attribute create -n "$TEMPORAL_NAMESPACE" --name "$1" --type "$2"
}
attr WdsOrgId Keyword
attr WdsEventId Keyword
attr WdsEventType Keyword
attr WdsDeliveryStatus Keyword
attr WdsEndpointIds KeywordList
attr WdsOrderNumber Int
attr WdsOrderId Keyword
