"""``subscriptions/listen`` (basic/patterns/subscriptions.mdx), without transport or storage.

The filter is opt-in per notification type; the acknowledgement names the subset the server
honours; every notification on the stream carries the listen request's id as
``io.modelcontextprotocol/subscriptionId`` (its JSON type kept).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Final

from . import jsonrpc
from .errors import InvalidParams
from .meta import SERVER_INFO_KEY, SUBSCRIPTION_ID_KEY
from .tasks import NOTIFICATION
from .uritemplate import URITemplate, normalised

#: The Tasks extension's status notification, for the streams that list ``taskIds``.
TASK_STATUS: Final = NOTIFICATION

ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"
TOOLS_LIST_CHANGED: Final = "notifications/tools/list_changed"
PROMPTS_LIST_CHANGED: Final = "notifications/prompts/list_changed"
RESOURCES_LIST_CHANGED: Final = "notifications/resources/list_changed"
RESOURCE_UPDATED: Final = "notifications/resources/updated"

#: Filter flag -> the notification it opts into.
LIST_FLAGS: Final = {
    "toolsListChanged": TOOLS_LIST_CHANGED,
    "promptsListChanged": PROMPTS_LIST_CHANGED,
    "resourcesListChanged": RESOURCES_LIST_CHANGED,
}


#: The most URIs or task ids one listen stream's filter may list. Each is looked up (task
#: ids in one query, whose parameters a database bounds: SQLite's default is 32,766 and
#: PostgreSQL's 65,535) and echoed in the acknowledgement; a client that watches more opens
#: more streams.
MAX_LISTED: Final = 1000


@dataclass(frozen=True)
class SubscriptionFilter:
    """What one listen stream asked for."""

    tools_list_changed: bool = False
    prompts_list_changed: bool = False
    resources_list_changed: bool = False
    resource_subscriptions: tuple[str, ...] | None = None
    #: Task ids (the Tasks extension's ``taskIds``): ``notifications/tasks`` for each.
    task_ids: tuple[str, ...] | None = None

    @classmethod
    def parse(cls, params: Mapping[str, Any]) -> SubscriptionFilter:
        """Read ``params.notifications``; -32602 when it is missing or malformed."""
        value = params.get("notifications")
        if not isinstance(value, Mapping):
            raise InvalidParams("params.notifications is required and must be an object")
        flags = {}
        for key in LIST_FLAGS:
            flag = value.get(key, False)
            if not isinstance(flag, bool):
                raise InvalidParams(f"params.notifications.{key} must be a boolean")
            flags[key] = flag
        uris = value.get("resourceSubscriptions")
        if uris is not None and not (
            isinstance(uris, list) and all(isinstance(uri, str) for uri in uris)
        ):
            raise InvalidParams("params.notifications.resourceSubscriptions must be a list of URIs")
        task_ids = value.get("taskIds")
        if task_ids is not None and not (
            isinstance(task_ids, list) and all(isinstance(item, str) for item in task_ids)
        ):
            raise InvalidParams("params.notifications.taskIds must be a list of task ids")
        for key, listed in (("resourceSubscriptions", uris), ("taskIds", task_ids)):
            if listed is not None and len(listed) > MAX_LISTED:
                raise InvalidParams(
                    f"params.notifications.{key} lists {len(listed)} items; "
                    f"one stream takes at most {MAX_LISTED}"
                )
        return cls(
            flags["toolsListChanged"],
            flags["promptsListChanged"],
            flags["resourcesListChanged"],
            tuple(uris) if uris is not None else None,
            tuple(task_ids) if task_ids is not None else None,
        )

    def honoured(self, supported: Mapping[str, bool]) -> SubscriptionFilter:
        """The subset the server can deliver, given which kinds it supports."""
        return SubscriptionFilter(
            self.tools_list_changed and supported.get("toolsListChanged", False),
            self.prompts_list_changed and supported.get("promptsListChanged", False),
            self.resources_list_changed and supported.get("resourcesListChanged", False),
            self.resource_subscriptions if supported.get("resourceSubscriptions", False) else None,
            self.task_ids,
        )

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.tools_list_changed:
            data["toolsListChanged"] = True
        if self.prompts_list_changed:
            data["promptsListChanged"] = True
        if self.resources_list_changed:
            data["resourcesListChanged"] = True
        if self.resource_subscriptions is not None:
            data["resourceSubscriptions"] = list(self.resource_subscriptions)
        if self.task_ids is not None:
            data["taskIds"] = list(self.task_ids)
        return data

    def wants(self, method: str, uri: str | None = None, templates: Collection[str] = ()) -> bool:
        """Whether a change notification ``method`` (for ``uri``) passes this filter;
        ``templates`` are the resource templates the server declares (see
        :meth:`subscribes_to`)."""
        if method == TOOLS_LIST_CHANGED:
            return self.tools_list_changed
        if method == PROMPTS_LIST_CHANGED:
            return self.prompts_list_changed
        if method == RESOURCES_LIST_CHANGED:
            return self.resources_list_changed
        if method == TASK_STATUS:
            return uri is not None and uri in (self.task_ids or ())
        if method == RESOURCE_UPDATED and uri is not None:
            return self.subscribes_to(uri, templates)
        return False

    def subscribes_to(self, uri: str, templates: Collection[str] = ()) -> bool:
        """Whether an update of ``uri`` concerns this stream's ``resourceSubscriptions``.

        A subscription names a resource exactly, or is one of the server's declared
        resource ``templates`` (an RFC 6570 URI template), whose matching URIs are its
        sub-resources. Never a string prefix: a subscription to ``authors://`` is not a
        subscription to ``authors://81``. URIs compare in RFC 3986 normal form, as
        ``resources/read`` looks them up: a subscription to ``notes://%61dmin`` (which
        reads ``notes://admin``) hears of a change announced at ``notes://admin``.
        """
        subscribed = {normalised(s) for s in self.resource_subscriptions or ()}
        if normalised(uri) in subscribed:
            return True
        return any(
            template in subscribed and URITemplate(template).match(uri) is not None
            for template in templates
        )


def acknowledgement(
    subscription_id: jsonrpc.RequestId, honoured: SubscriptionFilter
) -> dict[str, Any]:
    """The first message of every listen stream."""
    return jsonrpc.notification(
        ACKNOWLEDGED,
        {"_meta": {SUBSCRIPTION_ID_KEY: subscription_id}, "notifications": honoured.to_dict()},
    )


def change_notification(
    subscription_id: jsonrpc.RequestId, method: str, uri: str | None = None
) -> dict[str, Any]:
    params: dict[str, Any] = {"_meta": {SUBSCRIPTION_ID_KEY: subscription_id}}
    if uri is not None:
        params["uri"] = uri
    return jsonrpc.notification(method, params)


def closing_result(
    subscription_id: jsonrpc.RequestId, server_info: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The response that ends a listen stream the server closes (then it closes). Its
    ``_meta`` carries ``serverInfo`` when given, as every result's does."""
    meta: dict[str, Any] = {SUBSCRIPTION_ID_KEY: subscription_id}
    if server_info is not None:
        meta[SERVER_INFO_KEY] = dict(server_info)
    return jsonrpc.result_response(subscription_id, {"resultType": "complete", "_meta": meta})
