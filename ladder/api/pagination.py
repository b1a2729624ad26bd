from rest_framework.pagination import CursorPagination, PageNumberPagination


class Pagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200


class MatchCursorPagination(CursorPagination):
    """Matches page by cursor: no COUNT over millions of rows, stable while
    new matches arrive."""

    ordering = "-id"
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200
