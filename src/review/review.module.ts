import { Module } from '@nestjs/common';
import { ApprovalsModule } from '../approvals/approvals.module';
import { AuditModule } from '../audit/audit.module';
import { PostsModule } from '../posts/posts.module';
import { CommentsController } from './comments.controller';
import { CommentsRepository } from './comments.repository';
import { CommentsService } from './comments.service';
import { ReviewService } from './review.service';
import { ShareLinksController } from './share-links.controller';
import { ShareLinksRepository } from './share-links.repository';
import { ShareLinksService } from './share-links.service';

/**
 * Comments on posts and client review links (post_comments, share_links, share_link_posts): the
 * API (/v1/posts/:id/comments, /v1/posts/:id/share-links, /v1/share-links) and ReviewService,
 * which the review page (src/settings/review/) calls with a link's token.
 */
@Module({
  imports: [ApprovalsModule, AuditModule, PostsModule],
  controllers: [CommentsController, ShareLinksController],
  providers: [CommentsRepository, CommentsService, ShareLinksRepository, ShareLinksService, ReviewService],
  exports: [CommentsService, ShareLinksService, ReviewService],
})
export class ReviewModule {}
