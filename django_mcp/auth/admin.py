"""The admin of :class:`~django_mcp.auth.models.AccessToken`: create, revoke, look.

Adding a token shows its plaintext once, on the page that answers the add form (never in
a message, which Django may keep in a cookie); afterwards only its prefix is visible.
Tokens are not edited (revoke and issue a new one): the change view is read-only.

A token acts as its user, so issuing one for another user is acting as that user: "add
access token" alone issues tokens for oneself (the user field accepts no one else); a
superuser, or a holder of ``django_mcp.issue_accesstoken_for_others``, may name anyone.
Revoking takes "change access token", not merely seeing the list. The list's query string
takes only its filters and the user, with values the database takes
(:class:`~django_mcp.admin_guards.GuardedAdmin`).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.template.response import TemplateResponse
from django.urls import reverse

from django_mcp.admin_guards import (
    Check,
    GuardedAdmin,
    date_filter_lookups,
    is_user_key,
    user_lookups,
)
from django_mcp.auth.models import (
    EXPIRY_OUT_OF_RANGE,
    AccessToken,
    expiry_out_of_range,
    parse_scopes,
)

if TYPE_CHECKING:
    from django.db.models import ForeignKey, QuerySet
    from django.forms import ModelChoiceField, ModelForm
    from django.http import HttpRequest, HttpResponse

    _TokenForm = forms.ModelForm[AccessToken]
else:  # ModelForm is generic only in the type stubs: subscripted, a project's import fails
    _TokenForm = forms.ModelForm


class AccessTokenForm(_TokenForm):
    """The add form, refusing an expiry the database cannot keep."""

    class Meta:
        model = AccessToken
        fields = ("user", "name", "scopes", "expires_at")

    def clean_expires_at(self) -> datetime.datetime | None:
        """The expiry, if its UTC time is within year 1 to 9999. "Never expires" typed as
        9999-12-31 west of UTC is year 10000 there: SQLite overflowed (a 500), PostgreSQL
        stored it and then could not read it back, so the token list was a 500 for good."""
        value: datetime.datetime | None = self.cleaned_data.get("expires_at")
        if expiry_out_of_range(value):
            raise ValidationError(
                f"{EXPIRY_OUT_OF_RANGE}: choose another, or none for no expiry.",
                code="out_of_range",
            )
        return value


@admin.register(AccessToken)
class AccessTokenAdmin(GuardedAdmin):
    form = AccessTokenForm
    list_display = ("__str__", "user", "scopes", "expires_at", "revoked_at", "last_used_at")
    list_filter = ("revoked_at", "expires_at")
    search_fields = ("name", "prefix", "user__username")
    readonly_fields = ("prefix", "created_at", "revoked_at", "last_used_at")
    fields = ("user", "name", "scopes", "expires_at", *readonly_fields)
    raw_id_fields = ("user",)
    actions = ("revoke",)

    def guarded_lookups(self) -> Mapping[str, Check]:
        """The two date filters' parameters, and the user (a link may list one user's
        tokens), each with a value the database takes; anything else is Django's 400."""
        found = {**date_filter_lookups("revoked_at"), **date_filter_lookups("expires_at")}
        found.update(dict.fromkeys(user_lookups(), is_user_key))
        return found

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        return {"user": request.user.pk, **super().get_changeform_initial_data(request)}

    def formfield_for_foreignkey(
        self, db_field: ForeignKey[Any, Any], request: HttpRequest, **kwargs: Any
    ) -> ModelChoiceField[Any] | None:
        if db_field.name == "user" and not may_issue_for_others(request):
            # Validated on the server: any other id is "not one of the available choices".
            kwargs["queryset"] = db_field.remote_field.model._default_manager.filter(
                pk=request.user.pk
            )
            # A choice of one, not raw_id_fields' widget: that shows the name of any user
            # id it is given (``?user=<pk>``, a refused POST), read past this queryset.
            kwargs["widget"] = forms.Select()
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def get_readonly_fields(
        self, request: HttpRequest, obj: AccessToken | None = None
    ) -> tuple[str, ...]:
        if obj is None:
            return self.readonly_fields
        return (*self.fields, "revoked_at")

    def save_model(
        self, request: HttpRequest, obj: AccessToken, form: ModelForm[AccessToken], change: bool
    ) -> None:
        if not change:
            obj.scopes = " ".join(parse_scopes(obj.scopes))
            request._mcp_token_plaintext = obj.set_secret()  # type: ignore[attr-defined]
        super().save_model(request, obj, form, change)

    def response_add(
        self, request: HttpRequest, obj: AccessToken, post_url_continue: str | None = None
    ) -> HttpResponse:
        plaintext = getattr(request, "_mcp_token_plaintext", None)
        if plaintext is None:
            return super().response_add(request, obj, post_url_continue)
        context: dict[str, Any] = {
            **self.admin_site.each_context(request),
            "token": obj,
            "plaintext": plaintext,
            "opts": self.opts,
            "changelist_url": reverse("admin:django_mcp_accesstoken_changelist"),
        }
        response = TemplateResponse(request, "admin/django_mcp/accesstoken/created.html", context)
        response["Cache-Control"] = "no-store"
        return response

    @admin.action(description="Revoke the selected tokens", permissions=("change",))
    def revoke(self, request: HttpRequest, queryset: QuerySet[AccessToken]) -> None:
        for token in queryset:
            token.revoke()


def may_issue_for_others(request: HttpRequest) -> bool:
    """Whether the admin user may issue a token that acts as someone else."""
    return request.user.has_perm("django_mcp.issue_accesstoken_for_others")
